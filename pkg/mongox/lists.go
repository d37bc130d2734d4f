package mongox

import "encoding/hex"

// IDPart is id as a key part: id itself when it is one, else "~" and id's bytes in hex. Ids a
// service makes (apikey.NewID) are key parts and never start with "~"; an id learned from
// another service or an earlier release may not be one, and must not break a list's order.
func IDPart(id string) string {
	if id != "" && id[0] != '~' && KeyPart(id) {
		return id
	}
	return "~" + hex.EncodeToString([]byte(id))
}
