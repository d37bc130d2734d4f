package contract

import "testing"

func TestVisible(t *testing.T) {
	t.Parallel()
	owner := &Principal{ObjectID: "obj_a", Owner: true}
	reader := &Principal{ObjectID: "obj_a", Scopes: []string{ScopeRead}}
	writer := &Principal{ObjectID: "obj_a", Scopes: []string{ScopeWrite, ScopeMailbox}}
	stranger := &Principal{ObjectID: "obj_b", Owner: true}
	for name, c := range map[string]struct {
		v      Visibility
		viewer string
		want   bool
	}{
		"public to anyone":             {Public, "", true},
		"public to a stranger":         {Public, stranger.Viewer(), true},
		"private to anyone":            {Private, "", false},
		"private to a stranger":        {Private, stranger.Viewer(), false},
		"private to its owner key":     {Private, owner.Viewer(), true},
		"private to its read sub-key":  {Private, reader.Viewer(), true},
		"private to a sub-key without": {Private, writer.Viewer(), false},
		"private to no principal":      {Private, (*Principal)(nil).Viewer(), false},
	} {
		if got := Visible(c.v, "obj_a", c.viewer); got != c.want {
			t.Errorf("%s: Visible = %v, want %v", name, got, c.want)
		}
	}
	if !Public.Valid() || !Private.Valid() || Visibility("secret").Valid() || Visibility("").Valid() {
		t.Error("Valid accepts only public and private")
	}
}
