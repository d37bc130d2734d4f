package routes

import (
	"regexp"
	"strings"
)

// pathParam finds the {name} segments of a route path.
var pathParam = regexp.MustCompile(`\{([A-Za-z_]+)\}`)

// PathParams are the names of the path parameters of path, in order.
func PathParams(path string) []string {
	var out []string
	for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
		out = append(out, m[1])
	}
	return out
}

// GinPath turns /a/{b} into Gin's /a/:b, and a literal colon (A2A's /message:send) into Gin's
// escaped one.
func GinPath(p string) string {
	return pathParam.ReplaceAllString(strings.ReplaceAll(p, ":", `\:`), ":$1")
}
