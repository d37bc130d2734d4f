package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/svcdev/svc/pkg/client"
)

// keygen makes a signing key for an object and registers its public half (SVC_KEY: the owner
// key); the private half goes to a file only the user can read, never to svc.
func keygen(ctx context.Context, c *client.Client, fs *flag.FlagSet, args []string, enc *json.Encoder) error {
	out := fs.String("out", "svc-signing-key.json", "the file to write the private key to (mode 0600; it must not exist)")
	if err := parse(fs, args, 1); err != nil {
		return err
	}
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	k, err := c.NewSigningKey(ctx, fs.Arg(0))
	if err == nil {
		err = json.NewEncoder(f).Encode(k)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(*out)
		return err
	}
	return enc.Encode(map[string]string{"kid": k.KID, "key_file": *out, "signature_agent": client.DirectoryURL(c.BaseURL, k.Hash)})
}

// signRequest prints the headers that sign a request as the key file's object (HTTP Message
// Signatures, Web Bot Auth profile), one "Name: value" line each, for curl -H or any client.
func signRequest(c *client.Client, fs *flag.FlagSet, args []string, w io.Writer) error {
	keyFile := fs.String("key", "svc-signing-key.json", "the key file svc keygen wrote")
	method := fs.String("X", "GET", "the request's method")
	body := fs.String("d", "", "the request's body, exactly as it will be sent")
	ttl := fs.Duration("ttl", time.Minute, "how long the signature is valid (at most 5m)")
	if err := parse(fs, args, 1); err != nil {
		return err
	}
	raw, err := os.ReadFile(*keyFile)
	if err != nil {
		return err
	}
	var k client.SigningKey
	if err := json.Unmarshal(raw, &k); err != nil {
		return fmt.Errorf("%s: %w", *keyFile, err)
	}
	signer, err := k.RequestSigner(c.BaseURL)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(*method, fs.Arg(0), bytes.NewReader([]byte(*body)))
	if err != nil {
		return usageError(err.Error())
	}
	if err := signer.Sign(req, []byte(*body), time.Now(), *ttl); err != nil {
		return err
	}
	for _, h := range []string{"Signature-Agent", "Content-Digest", "Signature-Input", "Signature"} {
		if v := req.Header.Get(h); v != "" {
			fmt.Fprintf(w, "%s: %s\n", h, v)
		}
	}
	return nil
}
