package contract

// Optional is s as a field of an answer that is null when s is empty: the views of the services
// show an absent title, reason or id as null, never as "".
func Optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
