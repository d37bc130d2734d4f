package webhook

import (
	"strings"
	"testing"

	"github.com/svcdev/svc/pkg/apierr"
)

func TestCheckHeaders(t *testing.T) {
	t.Parallel()
	ok := []map[string]string{
		{},
		{"Authorization": "Bearer abc"},
		{"X-Team": "a\tb c", "x-obs": "caf\xc3\xa9"},
	}
	for _, h := range ok {
		if err := checkHeaders(h); err != nil {
			t.Errorf("checkHeaders(%q) = %v, want ok", h, err)
		}
	}
	bad := []map[string]string{
		{"Bad Name": "v"}, {"Bad:Name": "v"}, {"": "v"},
		{"Connection": "close"}, {"Keep-Alive": "1"}, {"TE": "trailers"}, {"Proxy-Authorization": "Basic x"},
		{"proxy-connection": "x"}, {"X-Forwarded-For": "10.0.0.1"}, {"Forwarded": "for=10.0.0.1"}, {"Via": "1.1 x"},
		{"Webhook-Signature": "v1,x"}, {"Host": "internal"},
		{"X-A": "line\r\nX-B: injected"}, {"X-A": "nul\x00"}, {"X-A": "bell\x07"}, {"X-A": "del\x7f"},
		{"X-A": " padded"}, {"X-A": strings.Repeat("v", MaxHeaderValueLen+1)},
	}
	for _, h := range bad {
		err := checkHeaders(h)
		if e := apierr.As(err); e == nil || e.Status != 400 {
			t.Errorf("checkHeaders(%q) = %v, want 400", h, err)
			continue
		}
		for _, v := range h {
			if len(v) > 3 && strings.Contains(err.Error(), v) {
				t.Errorf("the error %q shows the header value", err)
			}
		}
	}
}
