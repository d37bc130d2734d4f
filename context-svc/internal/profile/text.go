package profile

import (
	"bytes"
	"errors"
	"mime"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/svcdev/svc/pkg/contract"
)

// MaxSourceText bounds the text kept of one fetched source.
const MaxSourceText = 64 << 10

// ErrUnsupportedContent says that a fetched body is not text.
var ErrUnsupportedContent = errors.New("the source is not text, markdown or HTML")

// SourceText turns a fetched body into plain text: text and markdown as they are, HTML reduced to
// its readable text (scripts, styles and markup dropped). The result is cut to MaxSourceText.
func SourceText(contentType string, body []byte) (string, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || mt == "" {
		mt = "text/plain"
	}
	var text string
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		text = htmlText(body)
	case strings.HasPrefix(mt, "text/"), mt == "application/json", mt == "application/xml",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		if !utf8.Valid(body) {
			return "", ErrUnsupportedContent
		}
		text = string(body)
	default:
		return "", ErrUnsupportedContent
	}
	return contract.Truncate(strings.TrimSpace(text), MaxSourceText), nil
}

// blocks are the elements after which a line ends.
var blocks = map[string]bool{
	"p": true, "div": true, "br": true, "li": true, "tr": true, "section": true, "article": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "pre": true,
	"blockquote": true, "header": true, "footer": true, "table": true, "ul": true, "ol": true,
}

// skipped are the elements whose content is not readable text.
var skipped = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true, "svg": true, "head": true,
}

func htmlText(body []byte) string {
	z := html.NewTokenizer(bytes.NewReader(body))
	var out strings.Builder
	var line strings.Builder
	flush := func() {
		if s := strings.Join(strings.Fields(line.String()), " "); s != "" {
			out.WriteString(s)
			out.WriteString("\n")
		}
		line.Reset()
	}
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			flush()
			return out.String()
		case html.StartTagToken:
			name, _ := z.TagName()
			if skipped[string(name)] {
				skip++
			} else if blocks[string(name)] {
				flush()
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if skipped[string(name)] && skip > 0 {
				skip--
			} else if blocks[string(name)] {
				flush()
			}
		case html.SelfClosingTagToken:
			name, _ := z.TagName()
			if blocks[string(name)] {
				flush()
			}
		case html.TextToken:
			if skip == 0 {
				line.Write(z.Text())
				line.WriteString(" ")
			}
		}
	}
}
