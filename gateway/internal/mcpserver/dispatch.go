package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svcdev/svc/gateway/internal/routes"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
)

// caller is what a tool call needs of the /mcp request it came in: the headers the gateway
// reads (the key, the client address, the request id) and the principal of the key, if any.
type caller struct {
	header     http.Header
	remoteAddr string
	principal  *authn.Principal

	mu       sync.Mutex
	held     int64  // what the answer holds of the process-wide budget
	reserved func() // releases it
}

// shrink notes that n of what the caller held was given back early.
func (c *caller) shrink(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held -= n
}

// release gives back what the request's answer reserved, once it has been sent.
func (c *caller) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reserved != nil {
		c.reserved()
		c.reserved = nil
	}
}

type callerKey struct{}

func withCaller(ctx context.Context, c *caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

func callerFrom(ctx context.Context) *caller {
	c, _ := ctx.Value(callerKey{}).(*caller)
	return c
}

// forwarded are the headers of the /mcp request that a tool's route call carries: the key, and
// what the gateway finds the client's address and the request id by.
var forwarded = []string{"Authorization", "X-Forwarded-For", "X-Real-Ip", "Forwarded", httpx.HeaderRequestID}

// MaxResultBytes bounds the answer of one route call that a tool returns. A tool result carries
// it twice (as text and as structured content), so one /mcp answer stays under about three times
// this. Pages of large messages can exceed it: the tool call then answers 413 PAYLOAD_TOO_LARGE
// and names the limit argument to lower.
const MaxResultBytes = 512 << 10

// AnswerBudgetBytes bounds, for the whole process, the memory of the tool answers being built and
// sent at once: each reserves answerCopies times its route answer's size until it is written, so
// that clients asking for the largest answers together cannot grow the gateway by more than about
// this. A call that finds no room within answerWait answers 503 with Retry-After.
const AnswerBudgetBytes = 24 << 20

// answerCopies is how many copies of a route answer a tool answer holds at its peak: the recorded
// body, the text, the structured content and the encoded JSON-RPC response.
const answerCopies = 5

const answerWait = 5 * time.Second

// errArgument is a tool argument the route cannot take.
type errArgument struct{ msg string }

func (e errArgument) Error() string { return e.msg }

// toolHandler calls the tool's route through the gateway's own engine: the same route table,
// authentication, scope checks, rate limits, idempotency and internal tokens as a REST call.
func (h *Handler) toolHandler(t boundTool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c := callerFrom(ctx)
		if c == nil {
			return nil, errors.New("mcpserver: the tool call carries no caller")
		}
		call, err := buildCall(t, c, req.Params.Arguments, h.opts.KeySecret)
		if err != nil {
			var bad errArgument
			if errors.As(err, &bad) {
				return apiErrorResult(c, httpx.BadRequest(httpx.CodeInvalidRequest, "%s", bad.msg)), nil
			}
			return nil, err
		}
		// A read may answer up to MaxResultBytes: it holds room for that from before its route
		// runs (the backend's answer and the proxy's copy count too), and gives back what its
		// answer does not need once recorded. A write's answer is small and reserved after.
		var held int64
		if call.method == http.MethodGet {
			if held, err = h.reserve(ctx, c, MaxResultBytes); err != nil {
				return apiErrorResult(c, err), nil
			}
		}
		rec, err := h.serve(ctx, c, call)
		if err != nil {
			// Never the arguments: they may hold private guidance.
			h.opts.Log.Warn("mcp tool call failed", "tool", t.Name, "request_id", c.header.Get(httpx.HeaderRequestID), "error", err)
			return nil, err
		}
		if rec.overflow {
			return apiErrorResult(c, httpx.Errorf(http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge,
				"the answer is larger than %d bytes: ask for fewer items (a smaller limit)", MaxResultBytes)), nil
		}
		if need := answerBytes(rec.body.Len()); held > 0 {
			h.answers.Release(held - need)
			c.shrink(held - need)
		} else if _, err := h.reserve(ctx, c, rec.body.Len()); err != nil {
			return apiErrorResult(c, err), nil
		}
		return result(t.route, rec), nil
	}
}

// answerBytes is what an answer of size bytes holds of the budget.
func answerBytes(size int) int64 { return min(int64(size+1)*answerCopies, AnswerBudgetBytes) }

// reserve takes room for an answer of size bytes in the process-wide budget, until the request's
// answer is sent (caller.release), and reports how much it took.
func (h *Handler) reserve(ctx context.Context, c *caller, size int) (int64, error) {
	n := answerBytes(size)
	wait, cancel := context.WithTimeout(ctx, answerWait)
	defer cancel()
	if err := h.answers.Acquire(wait, n); err != nil {
		e := httpx.Unavailable(errors.New("mcp answers are at their memory budget"))
		e.Message = "too many large answers at once: retry in a second"
		e.RetryAfter = time.Second
		return 0, e
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held += n
	c.reserved = func() { h.answers.Release(c.held) }
	return n, nil
}

// apiErrorResult is a tool result for an error the tool layer raised itself, in the API's shape.
func apiErrorResult(c *caller, err error) *mcp.CallToolResult {
	e := httpx.AsError(err)
	return errorResult(e.Status, httpx.Body{Error: httpx.BodyError{Code: e.Code, Message: e.Message,
		RequestID: c.header.Get(httpx.HeaderRequestID)}})
}

// routeCall is one HTTP request of a route.
type routeCall struct {
	method, target string
	body           []byte
	idempotencyKey string
}

// buildCall turns the tool's arguments into the route's request: path parameters into the path,
// query parameters into the query string, the rest into the JSON body.
func buildCall(t boundTool, c *caller, raw json.RawMessage, keySecret []byte) (*routeCall, error) {
	r := t.route
	args := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, errArgument{"the arguments must be a JSON object"}
		}
	}
	own := ""
	if c.principal != nil {
		own = c.principal.Hash
	}
	path := r.Path
	for _, p := range routes.PathParams(r.Path) {
		name := argName(p)
		v, err := stringArg(args, name)
		if err != nil {
			return nil, err
		}
		delete(args, name)
		if v == "" && p == "hash" && t.OwnHash {
			v = own
		}
		if v == "" {
			return nil, errArgument{fmt.Sprintf("the argument %s is required", name)}
		}
		// A path argument is one segment of its route's path, never a way to another route.
		if strings.ContainsAny(v, "/\\?#%") || v == "." || v == ".." {
			return nil, errArgument{fmt.Sprintf("the argument %s must not contain '/', '\\', '?', '#' or '%%'", name)}
		}
		path = strings.Replace(path, "{"+p+"}", url.PathEscape(v), 1)
	}
	query := url.Values{}
	for _, q := range r.Query {
		v, ok := args[q.Name]
		if !ok {
			continue
		}
		delete(args, q.Name)
		s, err := scalar(q.Name, v)
		if err != nil {
			return nil, err
		}
		query.Set(q.Name, s)
	}
	call := &routeCall{method: r.Method, target: path}
	if len(query) > 0 {
		call.target += "?" + query.Encode()
	}
	if key, ok := args[idempotencyArg]; ok {
		delete(args, idempotencyArg)
		if err := json.Unmarshal(key, &call.idempotencyKey); err != nil {
			return nil, errArgument{idempotencyArg + " must be a string"}
		}
	}
	if r.Request == "" {
		for name := range args {
			return nil, errArgument{fmt.Sprintf("unknown argument %q", name)}
		}
		return call, nil
	}
	for name, v := range t.Defaults {
		if _, ok := args[name]; !ok {
			args[name], _ = json.Marshal(v)
		}
	}
	for name := range selfFields {
		if _, ok := args[name]; !ok && own != "" && t.bodyFields[name] {
			args[name], _ = json.Marshal(own)
		}
	}
	// Unknown body fields are the route's to refuse (400 UNKNOWN_FIELD), exactly as over REST.
	body, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("encode the body: %w", err)
	}
	call.body = body
	for _, hd := range r.Headers {
		if hd.Name == "Idempotency-Key" && call.idempotencyKey == "" {
			call.idempotencyKey = contentKey(keySecret, c, r, body)
		}
	}
	return call, nil
}

// contentKey derives an Idempotency-Key from what the call asks for and who asks, so that a client
// retrying a tool call (after a timeout, a lost answer) sends once. It is an HMAC under the
// gateway's secret: no one else can compute it, and the route keeps keys per caller anyway.
func contentKey(secret []byte, c *caller, r routes.Route, body []byte) string {
	var canon map[string]any
	_ = json.Unmarshal(body, &canon)
	cb, _ := json.Marshal(canon) // encoding/json sorts map keys: one spelling per content
	who := "anonymous"
	if c.principal != nil {
		who = c.principal.KeyID
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(who + "\n" + r.Method + " " + r.Path + "\n"))
	m.Write(cb)
	return "mcp_" + hex.EncodeToString(m.Sum(nil))
}

func stringArg(args map[string]json.RawMessage, name string) (string, error) {
	v, ok := args[name]
	if !ok || string(v) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", errArgument{fmt.Sprintf("the argument %s must be a string", name)}
	}
	return strings.TrimSpace(s), nil
}

// scalar renders a query argument: a string as is, a number or boolean as JSON spells it.
func scalar(name string, v json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, nil
	}
	var n json.Number
	if json.Unmarshal(v, &n) == nil {
		return n.String(), nil
	}
	var b bool
	if json.Unmarshal(v, &b) == nil {
		return strconv.FormatBool(b), nil
	}
	return "", errArgument{fmt.Sprintf("the argument %s must be a string, number or boolean", name)}
}

// serve runs the call through the gateway's engine in process.
func (h *Handler) serve(ctx context.Context, c *caller, call *routeCall) (*recorder, error) {
	req, err := http.NewRequestWithContext(ctx, call.method, call.target, bytes.NewReader(call.body))
	if err != nil {
		return nil, fmt.Errorf("build the route call: %w", err)
	}
	req.RemoteAddr = c.remoteAddr
	for _, name := range forwarded {
		if v := c.header.Values(name); len(v) > 0 {
			req.Header[http.CanonicalHeaderKey(name)] = v
		}
	}
	if call.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if call.idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", call.idempotencyKey)
	}
	rec := &recorder{header: http.Header{}}
	if err := serveRecovering(h.opts.Engine, rec, req); err != nil {
		return nil, fmt.Errorf("%s %s: %w", call.method, call.target, err)
	}
	return rec, nil
}

// serveRecovering runs the in-process request. A handler that aborts (http.ErrAbortHandler, as
// the reverse proxy does when a backend's answer breaks off) fails the call instead of the
// process: net/http recovers that panic only on its own connections.
func serveRecovering(engine http.Handler, w http.ResponseWriter, r *http.Request) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			err = errors.New("the route's answer broke off")
		}
	}()
	engine.ServeHTTP(w, r)
	return nil
}

// result is the tool result of a route's answer: its JSON as structured content (and as text, for
// clients that read only text), or the API error with isError set.
func result(r routes.Route, rec *recorder) *mcp.CallToolResult {
	status := cmp.Or(rec.status, http.StatusOK)
	raw := rec.body.Bytes()
	if status < 200 || status > 299 {
		var body httpx.Body
		if json.Unmarshal(raw, &body) != nil || body.Error.Code == "" {
			body.Error = httpx.BodyError{Code: httpx.CodeInternal, Message: http.StatusText(status),
				RequestID: rec.header.Get(httpx.HeaderRequestID)}
		}
		return errorResult(status, body)
	}
	if isText(r) {
		text := string(raw)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}},
			StructuredContent: map[string]any{"text": text}}
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}},
		StructuredContent: json.RawMessage(raw)}
}

// errorResult is a refused call: the text names the HTTP status and holds the API's error body,
// so that a model reads the same code and message a REST client would.
func errorResult(status int, body httpx.Body) *mcp.CallToolResult {
	raw, _ := json.Marshal(struct {
		Status int `json:"status"`
		httpx.Body
	}{status, body})
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}}
}

// recorder holds one route answer in memory, up to MaxResultBytes.
type recorder struct {
	header   http.Header
	status   int
	body     bytes.Buffer
	overflow bool
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *recorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	// Past the bound the answer is dropped, not refused: a refused write makes the reverse proxy
	// abort the whole handler with a panic; the call answers PAYLOAD_TOO_LARGE instead.
	if w.overflow || w.body.Len()+len(p) > MaxResultBytes {
		w.overflow = true
		w.body = bytes.Buffer{}
		return len(p), nil
	}
	return w.body.Write(p)
}

// Flush lets handlers that flush (the reverse proxy does for streamed answers) write here too.
func (w *recorder) Flush() {}
