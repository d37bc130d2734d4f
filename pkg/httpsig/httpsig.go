// Package httpsig signs and verifies HTTP requests with HTTP Message Signatures (RFC 9421) in the
// Web Bot Auth profile: an Ed25519 signature labelled sig1, tagged web-bot-auth, whose keyid is
// the key's RFC 7638 thumbprint (an object's kid in its jwks.json), covering the method, the
// authority, the path, the Signature-Agent header that names where the key is published and,
// for a request with a body, its Content-Digest (RFC 9530). Structured fields are written and
// read by httpsfv; the signature base is RFC 9421 §2.5's.
package httpsig

import (
	"bytes"
	"cmp"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"
)

// Profile constants.
const (
	// Tag is the tag parameter of a Web Bot Auth signature.
	Tag = "web-bot-auth"
	// Label is the label of the signature this package makes.
	Label = "sig1"
	// MaxLifetime bounds expires − created of a signature this package accepts: a signature is
	// short-lived, so that a copy of the request is worth little for long.
	MaxLifetime = 5 * time.Minute
	// Skew is how far in the future created may lie, for clocks that disagree a little.
	Skew = 30 * time.Second
	// nonceBytes is the length of a nonce, as Web Bot Auth's reference implementation makes it.
	nonceBytes = 64
)

// Headers of the profile.
const (
	HeaderSignature      = "Signature"
	HeaderSignatureInput = "Signature-Input"
	HeaderSignatureAgent = "Signature-Agent"
	HeaderContentDigest  = "Content-Digest"
)

// Errors of a verification; every one means that the request is not signed as it should be.
var (
	ErrUnsigned = errors.New("no web-bot-auth signature")
	ErrInvalid  = errors.New("invalid signature")
	ErrExpired  = errors.New("signature expired or not yet valid")
)

// Signer signs requests with one Ed25519 key.
type Signer struct {
	Key ed25519.PrivateKey
	// KeyID is the key's RFC 7638 thumbprint.
	KeyID string
	// Agent is the URL of the directory that publishes the key (the Signature-Agent header).
	Agent string
}

// Sign adds Content-Digest (when body is not empty), Signature-Agent, Signature-Input and
// Signature to req, valid from now for ttl (at most MaxLifetime). body must be what req sends.
func (s Signer) Sign(req *http.Request, body []byte, now time.Time, ttl time.Duration) error {
	if ttl <= 0 || ttl > MaxLifetime {
		return fmt.Errorf("httpsig: a signature lives from 1s to %s", MaxLifetime)
	}
	nonce := make([]byte, nonceBytes)
	if _, err := rand.Read(nonce); err != nil {
		return fmt.Errorf("httpsig: nonce: %w", err)
	}
	components := []string{"@method", "@authority", "@path"}
	if s.Agent != "" {
		agent, err := httpsfv.Marshal(httpsfv.NewItem(s.Agent))
		if err != nil {
			return fmt.Errorf("httpsig: signature agent: %w", err)
		}
		req.Header.Set(HeaderSignatureAgent, agent)
		components = append(components, "signature-agent")
	}
	if len(body) > 0 {
		req.Header.Set(HeaderContentDigest, ContentDigest(body))
		components = append(components, "content-digest")
	}
	params := signatureParams(s.KeyID, now, ttl)
	params.Add("nonce", base64.StdEncoding.EncodeToString(nonce))
	params.Add("tag", Tag)
	list := httpsfv.InnerList{Params: params}
	for _, c := range components {
		list.Items = append(list.Items, httpsfv.NewItem(c))
	}
	input, sigParams, err := marshalInput(list)
	if err != nil {
		return err
	}
	base, err := signatureBase(req, components, sigParams)
	if err != nil {
		return err
	}
	return setSignature(req.Header, input, s.Key, base)
}

// signatureParams are the parameters that open every signature this package makes.
func signatureParams(keyID string, now time.Time, ttl time.Duration) *httpsfv.Params {
	params := httpsfv.NewParams()
	params.Add("created", now.Unix())
	params.Add("expires", now.Add(ttl).Unix())
	params.Add("keyid", keyID)
	params.Add("alg", "ed25519")
	return params
}

// setSignature signs base with key and sets Signature-Input (input) and Signature in h.
func setSignature(h http.Header, input string, key ed25519.PrivateKey, base []byte) error {
	sig := httpsfv.NewDictionary()
	sig.Add(Label, httpsfv.NewItem(ed25519.Sign(key, base)))
	value, err := httpsfv.Marshal(sig)
	if err != nil {
		return fmt.Errorf("httpsig: signature: %w", err)
	}
	h.Set(HeaderSignatureInput, input)
	h.Set(HeaderSignature, value)
	return nil
}

// ContentDigest is the Content-Digest field value (RFC 9530) of body: its SHA-256.
func ContentDigest(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
}

// Verified is what a valid signature says.
type Verified struct {
	KeyID string
	// Agent is the Signature-Agent header's URL, "" when the request names none.
	Agent            string
	Created, Expires time.Time
	Nonce            string
}

// Verify checks the web-bot-auth signature of req, whose body is body, at now with the key that
// keyOf returns for the signature's keyid and agent. The signature must cover the method, the
// authority, the path, Signature-Agent when the request carries one, and Content-Digest when it
// has a body, and that digest must be the body's; created may not lie in the future (beyond Skew),
// expires must not have passed, and the signature may live at most MaxLifetime.
func Verify(req *http.Request, body []byte, now time.Time, keyOf func(keyID, agent string) (ed25519.PublicKey, error)) (*Verified, error) {
	inputs, err := httpsfv.UnmarshalDictionary(req.Header.Values(HeaderSignatureInput))
	if err != nil || len(inputs.Names()) == 0 {
		return nil, ErrUnsigned
	}
	sigs, err := httpsfv.UnmarshalDictionary(req.Header.Values(HeaderSignature))
	if err != nil {
		return nil, fmt.Errorf("%w: Signature is not a dictionary", ErrInvalid)
	}
	for _, label := range inputs.Names() {
		m, _ := inputs.Get(label)
		list, ok := m.(httpsfv.InnerList)
		if !ok || param[string](list.Params, "tag") != Tag {
			continue
		}
		return verifyOne(req, body, now, keyOf, label, list, sigs)
	}
	return nil, ErrUnsigned
}

func verifyOne(req *http.Request, body []byte, now time.Time, keyOf func(keyID, agent string) (ed25519.PublicKey, error),
	label string, list httpsfv.InnerList, sigs *httpsfv.Dictionary) (*Verified, error) {
	var components []string
	for _, it := range list.Items {
		c, ok := it.Value.(string)
		if !ok {
			return nil, fmt.Errorf("%w: a component is not a string", ErrInvalid)
		}
		components = append(components, c)
	}
	need := []string{"@method", "@authority", "@path"}
	if req.Header.Get(HeaderSignatureAgent) != "" {
		need = append(need, "signature-agent")
	}
	if len(body) > 0 {
		need = append(need, "content-digest")
		if req.Header.Get(HeaderContentDigest) != ContentDigest(body) {
			return nil, fmt.Errorf("%w: Content-Digest is not the body's SHA-256", ErrInvalid)
		}
	}
	for _, c := range need {
		if !slices.Contains(components, c) {
			return nil, fmt.Errorf("%w: the signature does not cover %s", ErrInvalid, c)
		}
	}
	v := &Verified{KeyID: param[string](list.Params, "keyid"), Nonce: param[string](list.Params, "nonce"),
		Created: time.Unix(param[int64](list.Params, "created"), 0), Expires: time.Unix(param[int64](list.Params, "expires"), 0)}
	if v.KeyID == "" || v.Created.Unix() == 0 || v.Expires.Unix() == 0 {
		return nil, fmt.Errorf("%w: keyid, created and expires are required", ErrInvalid)
	}
	if v.Created.After(now.Add(Skew)) || !v.Expires.After(now) || v.Expires.Sub(v.Created) > MaxLifetime {
		return nil, ErrExpired
	}
	if a := req.Header.Get(HeaderSignatureAgent); a != "" {
		it, err := httpsfv.UnmarshalItem([]string{a})
		s, ok := it.Value.(string)
		if err != nil || !ok {
			return nil, fmt.Errorf("%w: Signature-Agent is not a string", ErrInvalid)
		}
		v.Agent = s
	}
	m, ok := sigs.Get(label)
	item, isItem := m.(httpsfv.Item)
	sig, isBytes := item.Value.([]byte)
	if !ok || !isItem || !isBytes {
		return nil, fmt.Errorf("%w: no signature labelled %s", ErrInvalid, label)
	}
	_, sigParams, err := marshalInput(list)
	if err != nil {
		return nil, err
	}
	base, err := signatureBase(req, components, sigParams)
	if err != nil {
		return nil, err
	}
	key, err := keyOf(v.KeyID, v.Agent)
	if err != nil {
		return nil, err
	}
	if !ed25519.Verify(key, base, sig) {
		return nil, ErrInvalid
	}
	return v, nil
}

// param is a parameter's value of type T, or T's zero value.
func param[T any](p *httpsfv.Params, name string) T {
	var zero T
	if p == nil {
		return zero
	}
	v, _ := p.Get(name)
	t, _ := v.(T)
	return t
}

// marshalInput serializes the Signature-Input field of list under Label and the value of its
// @signature-params line (the same inner list with its parameters).
func marshalInput(list httpsfv.InnerList) (field, sigParams string, err error) {
	d := httpsfv.NewDictionary()
	d.Add(Label, list)
	field, err = httpsfv.Marshal(d)
	if err != nil {
		return "", "", fmt.Errorf("httpsig: signature input: %w", err)
	}
	return field, strings.TrimPrefix(field, Label+"="), nil
}

// signatureBase is RFC 9421 §2.5's signature base of req over components.
func signatureBase(req *http.Request, components []string, sigParams string) ([]byte, error) {
	var b bytes.Buffer
	for _, c := range components {
		var v string
		switch c {
		case "@method":
			v = req.Method
		case "@authority":
			v = authority(req)
		case "@path":
			v = cmp.Or(req.URL.EscapedPath(), "/")
		default:
			if strings.HasPrefix(c, "@") || c != strings.ToLower(c) {
				return nil, fmt.Errorf("%w: component %s is not supported", ErrInvalid, c)
			}
			values := req.Header.Values(c)
			if len(values) == 0 {
				return nil, fmt.Errorf("%w: the covered header %s is missing", ErrInvalid, c)
			}
			for i := range values {
				values[i] = strings.TrimSpace(values[i])
			}
			v = strings.Join(values, ", ")
		}
		fmt.Fprintf(&b, "%q: %s\n", c, v)
	}
	fmt.Fprintf(&b, "\"@signature-params\": %s", sigParams)
	return b.Bytes(), nil
}

// authority is the request's host, lower case, without the scheme's default port (RFC 9421
// §2.2.3).
func authority(req *http.Request) string {
	host := strings.ToLower(cmp.Or(req.Host, req.URL.Host))
	// A server's request has no scheme: its TLS says which it came by.
	if req.URL.Scheme == "https" || req.URL.Scheme == "" && req.TLS != nil {
		return strings.TrimSuffix(host, ":443")
	}
	return strings.TrimSuffix(host, ":80")
}

// DirectoryTag is the tag of the signature over a key directory's response.
const DirectoryTag = "http-message-signatures-directory"

// DirectoryPath is where svc publishes the key of its own signed requests.
const DirectoryPath = "/.well-known/http-message-signatures-directory"

// ObjectDirectoryURL is where svc at base publishes an object's key for its signed requests:
// the Signature-Agent of a request the object signs.
func ObjectDirectoryURL(base, hash string) string {
	return base + "/api/objects/" + url.PathEscape(hash) + "/http-message-signatures-directory"
}

// DirectoryContentType is the media type of a key directory.
const DirectoryContentType = "application/http-message-signatures-directory+json"

// SignDirectory adds Signature-Input and Signature to the headers h of a key directory's
// response served at authority, signed with key: the signature covers the request's authority
// ("@authority";req) and is tagged DirectoryTag, as the directory draft asks, so that a client
// knows the directory's keys are held by whoever the directory names.
func SignDirectory(h http.Header, authority string, key ed25519.PrivateKey, keyID string, now time.Time, ttl time.Duration) error {
	params := signatureParams(keyID, now, ttl)
	params.Add("tag", DirectoryTag)
	reqParam := httpsfv.NewParams()
	reqParam.Add("req", true)
	list := httpsfv.InnerList{Items: []httpsfv.Item{{Value: "@authority", Params: reqParam}}, Params: params}
	input, sigParams, err := marshalInput(list)
	if err != nil {
		return err
	}
	base := fmt.Sprintf("\"@authority\";req: %s\n\"@signature-params\": %s", strings.ToLower(authority), sigParams)
	return setSignature(h, input, key, []byte(base))
}
