package graph

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"codeberg.org/readeck/go-readability/v2/render"
	"golang.org/x/net/html"

	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/outbound"
)

// Fetcher fetches third-party URLs through the SSRF guard, size cap and timeouts of
// pkg/outbound.
type Fetcher interface {
	CheckURL(raw string) (*url.URL, error)
	Get(ctx context.Context, raw string) (*outbound.Response, error)
}

// MaxText bounds the text a node keeps of one fetched page or one ingested text.
const MaxText = apierr.MaxTextBytes

// fetchText fetches a source's URL and returns its readable text, or the reason it could not,
// worded for the owner (never the page's content).
func (s *Service) fetchText(ctx context.Context, raw string) (string, error) {
	if deadline, ok := ctx.Value(fetchDeadlineKey{}).(time.Time); ok { // an ingest's
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	if err := ctx.Err(); errors.Is(err, context.DeadlineExceeded) {
		return "", errors.New("not fetched: the ingest's time ran out before this page's turn; pull it again")
	}
	resp, err := s.Fetcher.Get(ctx, raw)
	if err != nil {
		return "", errors.New(fetchError(err, s.MaxFetchBytes))
	}
	if resp.Status < 200 || resp.Status > 299 {
		return "", fmt.Errorf("the address answered HTTP %d", resp.Status)
	}
	text, err := readableText(resp)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(text) == "" {
		return "", errors.New("the page holds no readable text")
	}
	return truncate(text, MaxText), nil
}

// fetchError words a failed fetch.
func fetchError(err error, maxBytes int64) string {
	var refused *outbound.RefusedError
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.Is(err, outbound.ErrTooLarge):
		return fmt.Sprintf("the page is larger than %d bytes, the most that is read", maxBytes)
	case errors.As(err, &refused) && refused.Reason == "port":
		return "refused: the address is, or redirects to, a port other than those of http and https"
	case errors.Is(err, outbound.ErrRefused):
		return "refused: the address is, or redirects to, a private or local network address"
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "unreachable: the host name does not resolve"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "unreachable: timed out"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "unreachable: connection refused"
	}
	return "unreachable: the connection failed"
}

// readableText turns a response into text: HTML through a readability parser (the article,
// without navigation, scripts and styles; the whole body's text when no article stands out),
// plain text, markdown, CSV and JSON as they are. Anything else is refused.
func readableText(resp *outbound.Response) (string, error) {
	ct, _, _ := mime.ParseMediaType(resp.ContentType)
	if ct == "" {
		ct = http.DetectContentType(resp.Body)
		ct, _, _ = mime.ParseMediaType(ct)
	}
	switch {
	case ct == "text/html" || ct == "application/xhtml+xml":
		return HTMLText(resp.Body, resp.URL)
	case strings.HasPrefix(ct, "text/") || ct == "application/json" || ct == "application/octet-stream" && utf8.Valid(resp.Body):
		if !utf8.Valid(resp.Body) {
			return "", errors.New("the text is not UTF-8")
		}
		return string(resp.Body), nil
	}
	return "", fmt.Errorf("the address serves %s, which is not text or HTML", ct)
}

// HTMLText is the readable text of an HTML page at pageURL.
func HTMLText(page []byte, pageURL string) (string, error) {
	u, _ := url.Parse(pageURL)
	if article, err := readability.FromReader(bytes.NewReader(page), u); err == nil && article.Node != nil {
		var b strings.Builder
		if err := article.RenderText(&b); err == nil && strings.TrimSpace(b.String()) != "" {
			if title := strings.TrimSpace(article.Title()); title != "" && !strings.HasPrefix(strings.TrimSpace(b.String()), title) {
				return title + "\n\n" + strings.TrimSpace(b.String()), nil
			}
			return strings.TrimSpace(b.String()), nil
		}
	}
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		return "", errors.New("the page is not HTML that can be read")
	}
	return strings.TrimSpace(render.InnerText(doc)), nil
}

// truncate cuts s to at most max bytes on a character boundary.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// DirectDownload returns the direct-download address of a public share link of Google Drive
// (files, Docs, Sheets, Slides), Dropbox or OneDrive, or INVALID_URL for any other address.
func DirectDownload(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return "", apierr.BadRequest(apierr.CodeInvalidURL, "cloud_drive_urls must be https share links")
	}
	host := strings.ToLower(u.Hostname())
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	switch {
	case host == "drive.google.com":
		id := u.Query().Get("id")
		if len(parts) >= 3 && parts[0] == "file" && parts[1] == "d" {
			id = parts[2]
		}
		if id != "" {
			return "https://drive.google.com/uc?export=download&id=" + url.QueryEscape(id), nil
		}
	case host == "docs.google.com" && len(parts) >= 3 && parts[1] == "d":
		format := map[string]string{"document": "txt", "spreadsheets": "csv", "presentation": "txt"}[parts[0]]
		if format != "" {
			return fmt.Sprintf("https://docs.google.com/%s/d/%s/export?format=%s", parts[0], url.PathEscape(parts[2]), format), nil
		}
	case host == "www.dropbox.com" || host == "dropbox.com":
		q := u.Query()
		q.Set("dl", "1")
		return (&url.URL{Scheme: "https", Host: "www.dropbox.com", Path: u.Path, RawQuery: q.Encode()}).String(), nil
	case host == "1drv.ms" || host == "onedrive.live.com":
		// OneDrive's shares API takes any share link encoded as u!<base64url without padding>.
		return "https://api.onedrive.com/v1.0/shares/u!" + base64.RawURLEncoding.EncodeToString([]byte(u.String())) + "/root/content", nil
	}
	return "", apierr.BadRequest(apierr.CodeInvalidURL, "%s is not a share link of Google Drive, Dropbox or OneDrive", host)
}
