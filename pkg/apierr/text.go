package apierr

import "strings"

// Body size limits of DESIGN §4: a larger body is TooLarge.
const (
	MaxBodyBytes = 1 << 20   // any JSON body
	MaxTextBytes = 256 << 10 // one llm.txt or text body
)

// IsBidiControl reports whether r is a bidirectional embedding, override or isolate control
// (U+202A–U+202E, U+2066–U+2069). In display text (a title, a name, a feed line) one reorders
// the characters after it, so that "\u202Egpj.exe" reads as "exe.jpg": a spoof, never content.
func IsBidiControl(r rune) bool {
	return r >= '\u202A' && r <= '\u202E' || r >= '\u2066' && r <= '\u2069'
}

// HasBidiControl reports whether s holds a bidirectional control (see IsBidiControl).
func HasBidiControl(s string) bool { return strings.IndexFunc(s, IsBidiControl) >= 0 }

// StripBidiControls returns s without its bidirectional controls, for display text derived from
// what a caller wrote (a profile's title) rather than sent as a field that can be refused.
func StripBidiControls(s string) string {
	if !HasBidiControl(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if IsBidiControl(r) {
			return -1
		}
		return r
	}, s)
}

// RefuseBidiControls answers 400 when a display-text field holds a bidirectional control.
func RefuseBidiControls(field, value string) error {
	if HasBidiControl(value) {
		return BadRequest(CodeInvalidRequest, "%s must not hold bidirectional control characters (U+202A–U+202E, U+2066–U+2069)", field)
	}
	return nil
}
