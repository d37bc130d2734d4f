// Command svc talks to an svc deployment from a terminal: create an object, send a message, list
// a mailbox, read a thread, watch a mailbox for new messages. It uses pkg/client; SVC_URL names
// the deployment (default http://127.0.0.1:8080) and SVC_KEY the API key of owner commands.
//
//	svc create [-profile '# Ada'] [-private]
//	svc send -from svc_… -to svc_… [-kind note] [-thread thr_…] [-idempotency-key k] 'the body'
//	svc mailbox svc_…            (SVC_KEY: that object's key)
//	svc read thr_…               (SVC_KEY: a participant's key)
//	svc watch [-mark-read] [-every 5s] svc_…  (SVC_KEY: that object's key; prints each message
//	                             that arrives, with its thread_id, until Ctrl-C)
//	svc keygen [-out file] svc_…  (SVC_KEY: the owner key; registers a key whose private half stays in file)
//	svc sign-request [-key file] [-X POST] [-d body] [-ttl 1m] URL  (prints the signature headers)
//
// Every command takes -h, which lists its flags.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/svcdev/svc/pkg/client"
	"github.com/svcdev/svc/pkg/contract"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv("SVC_URL"), os.Getenv("SVC_KEY"), os.Stdout)
	var usage usageError
	switch {
	case errors.As(err, &usage):
		fmt.Fprintln(os.Stderr, "svc:", err)
		os.Exit(2)
	case err != nil && !errors.Is(err, context.Canceled):
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type usageError string

func (e usageError) Error() string { return string(e) }

const usage = "usage: svc create|send|mailbox|read|watch|keygen|sign-request …  (SVC_URL, SVC_KEY; see the package doc)"

// run executes one command; its answers are printed as JSON, one value per line. -h prints the
// command's usage and flags instead, and is no error.
func run(ctx context.Context, args []string, baseURL, key string, out io.Writer) error {
	if err := command(ctx, args, baseURL, key, out); !errors.Is(err, errHelp) {
		return err
	}
	return nil
}

func command(ctx context.Context, args []string, baseURL, key string, out io.Writer) error {
	if len(args) == 0 {
		return usageError(usage)
	}
	c := client.New(cmp.Or(baseURL, "http://127.0.0.1:8080"), key)
	enc := json.NewEncoder(out)
	// encode prints a command's answer, or returns its error.
	encode := func(v any, err error) error {
		if err != nil {
			return err
		}
		return enc.Encode(v)
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	synopsis := map[string]string{
		"create":  "create [-profile md] [-private]",
		"send":    "send -from svc_… -to svc_… [-kind note] [-thread thr_…] [-idempotency-key k] 'the body'",
		"mailbox": "mailbox svc_…",
		"read":    "read thr_…",
		"watch":   "watch [-mark-read] [-every 5s] svc_…",
	}
	fs.Usage = func() {
		fmt.Fprintf(out, "usage: svc %s\n", synopsis[args[0]])
		fs.SetOutput(out)
		fs.PrintDefaults()
	}
	switch args[0] {
	case "create":
		profile := fs.String("profile", "", "the first llm.txt (markdown)")
		private := fs.Bool("private", false, "a private object")
		if err := parse(fs, args[1:], 0); err != nil {
			return err
		}
		o := client.NewObject{InitialLLMTxt: *profile, Visibility: string(contract.Public)}
		if *private {
			o.Visibility = string(contract.Private)
		}
		return encode(c.CreateObject(ctx, o))
	case "send":
		from := fs.String("from", "", "the sender's hash")
		to := fs.String("to", "", "the recipient's hash")
		kind := fs.String("kind", "note", "note, question, request, artifact_update or system")
		thread := fs.String("thread", "", "a thread to continue")
		idem := fs.String("idempotency-key", "", "makes a retry store the message once")
		if err := parse(fs, args[1:], 1); err != nil {
			return err
		}
		if *from == "" || *to == "" {
			return usageError("send needs -from and -to")
		}
		return encode(c.Send(ctx, client.NewMessage{FromHash: *from, ToHash: *to, Kind: *kind, Body: fs.Arg(0),
			ThreadID: *thread, IdempotencyKey: *idem}))
	case "mailbox", "read":
		if err := parse(fs, args[1:], 1); err != nil {
			return err
		}
		if args[0] == "read" {
			return encode(c.Thread(ctx, fs.Arg(0), ""))
		}
		return encode(c.Mailbox(ctx, fs.Arg(0), ""))
	case "keygen":
		return keygen(ctx, c, fs, args[1:], enc)
	case "sign-request":
		return signRequest(c, fs, args[1:], out)
	case "watch":
		markRead := fs.Bool("mark-read", false, "read the threads of new messages, which marks them read (by default nothing is marked read)")
		every := fs.Duration("every", 5*time.Second, "with -mark-read: how often to look at the mailbox")
		if err := parse(fs, args[1:], 1); err != nil {
			return err
		}
		show := func(m client.Message) error { return enc.Encode(m) }
		if *markRead {
			return c.Watch(ctx, fs.Arg(0), *every, show)
		}
		return c.Follow(ctx, fs.Arg(0), show)
	}
	return usageError(usage)
}

// errHelp is what parse returns once it has printed a command's flags, asked for with -h.
var errHelp = errors.New("help printed")

// parse reads a command's flags and checks it got exactly args positional arguments; -h prints
// the command's usage and flags.
func parse(fs *flag.FlagSet, args []string, positional int) error {
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return errHelp // Parse has printed the usage
	} else if err != nil {
		return usageError(fmt.Sprintf("%s: %v", fs.Name(), err))
	}
	if fs.NArg() != positional {
		return usageError(fmt.Sprintf("%s takes %d argument(s), got %q", fs.Name(), positional, strings.Join(fs.Args(), " ")))
	}
	return nil
}
