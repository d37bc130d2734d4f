package contract

// Visibility says who may learn that an object exists. It is set when the object is created and
// never changes.
type Visibility string

// The visibilities an object is created with (spec "Object visibility").
const (
	// Public objects appear in every public read.
	Public Visibility = "public"
	// Private objects are known to their owner only: anyone else is answered as if the object did
	// not exist (404 NOT_FOUND), everywhere but message ingress (docs/api.md, "Private objects").
	Private Visibility = "private"
)

// Valid reports whether v is a visibility an object may be created with.
func (v Visibility) Valid() bool { return v == Public || v == Private }

// Visible is the one rule of private objects, which the gateway and every service apply: viewer
// may learn that the object objectID of visibility v exists when the object is not private or
// when viewer is the object itself. viewer is the object a caller acts as: Principal.Viewer for a
// read, the key's object for a write the gateway admitted with its scope, "" for an anonymous
// caller or a read that shows the object to everyone (a network feed, the directory).
func Visible(v Visibility, objectID, viewer string) bool {
	return v != Private || viewer != "" && viewer == objectID
}

// Viewer is the object id p reads as when it asks for a possibly private object: its own object
// when its key may read (the owner key, or a sub-key with the read scope), else "", as for an
// anonymous caller (a nil p). A sub-key without read thus never shows its private object.
func (p *Principal) Viewer() string {
	if !p.HasScope(ScopeRead) {
		return ""
	}
	return p.ObjectID
}
