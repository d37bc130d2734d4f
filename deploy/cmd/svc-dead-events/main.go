// Command svc-dead-events lists, replays and deletes the dead letters of one service: the events
// its consumers could not handle. It calls the service's internal routes with an internal token
// signed by SERVICE_JWT_KEY, the key the services share (a token that carries no principal).
//
//	svc-dead-events -service mailbox-svc -url http://127.0.0.1:8081 list
//	svc-dead-events -service mailbox-svc -url http://127.0.0.1:8081 replay <id>
//	svc-dead-events -service mailbox-svc -url http://127.0.0.1:8081 delete <id>
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/svcdev/svc/pkg/authn"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "svc-dead-events:", err)
		os.Exit(1)
	}
}

func run() error {
	service := flag.String("service", "", "the service whose dead letters to manage (identity-svc, context-svc, mailbox-svc, …)")
	base := flag.String("url", "", "the service's internal address, e.g. http://svc-mailbox-svc (or a port-forward)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: svc-dead-events -service NAME -url URL list | replay ID | delete ID")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *service == "" || *base == "" {
		flag.Usage()
		os.Exit(2)
	}
	method, path, err := route(flag.Args())
	if err != nil {
		flag.Usage()
		return err
	}
	keys, err := authn.ParseSigningKey(os.Getenv("SERVICE_JWT_KEY"))
	if err != nil {
		return fmt.Errorf("SERVICE_JWT_KEY: %w", err)
	}
	token, err := keys.Mint("operator", *service, nil, nil, "")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(*base, "/")+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	fmt.Println(string(body))
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %s", method, path, res.Status)
	}
	return nil
}

// route maps the command line to the service's dead-letter route.
func route(args []string) (method, path string, err error) {
	const root = "/internal/v1/dead-events"
	switch {
	case len(args) == 1 && args[0] == "list":
		return http.MethodGet, root + "?limit=1000", nil
	case len(args) == 2 && args[0] == "replay":
		return http.MethodPost, root + "/" + url.PathEscape(args[1]) + "/replay", nil
	case len(args) == 2 && args[0] == "delete":
		return http.MethodDelete, root + "/" + url.PathEscape(args[1]), nil
	}
	return "", "", errors.New("say list, replay ID or delete ID")
}
