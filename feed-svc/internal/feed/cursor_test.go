package feed

import "encoding/base64"

// decodeCursor turns an opaque cursor back into the key PageCursor would give the use case.
func decodeCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	return string(b), err
}
