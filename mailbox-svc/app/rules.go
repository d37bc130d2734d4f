package app

import (
	"context"
	"net/http"
	"net/url"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/rpc"
)

// contextRules reads an object's rules from context-svc's internal API.
type contextRules struct{ rpc *rpc.Client }

// Rules returns the rules the object's owner set (nil: none); rpc.ErrNotFound when context-svc
// does not know the object.
func (r contextRules) Rules(ctx context.Context, objectID string) (*contract.Rules, error) {
	var rules *contract.Rules
	if err := r.rpc.Do(ctx, http.MethodGet, "/internal/v1/objects/"+url.PathEscape(objectID)+"/rules", nil, &rules); err != nil {
		return nil, err
	}
	return rules, nil
}
