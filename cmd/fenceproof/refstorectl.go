package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/refstore"
)

// runRefstoreCtl is `fenceproof refstore ctl`: the admin API from the
// command line (images have no curl). It prints the JSON answer.
func runRefstoreCtl(args []string) int {
	fs := flag.NewFlagSet("refstore ctl", flag.ContinueOnError)
	admin := fs.String("admin", "unix:///run/refstore/admin.sock", "admin endpoint: unix:///path.sock or tcp://host:port")
	tokenFile := fs.String("token-file", "", "bearer token file for a tcp:// endpoint")
	timeout := fs.Duration("timeout", 30*time.Second, "deadline of the call")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: fenceproof refstore ctl [--admin EP] [--token-file F] blocklist | clients | stats | set [CIDR ...] | dump audit|enforce|refusals")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	token := ""
	if *tokenFile != "" {
		raw, err := os.ReadFile(*tokenFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fenceproof refstore ctl:", err)
			return 2
		}
		token = strings.TrimSpace(string(raw))
	}
	c, err := refstore.NewAdminClient(*admin, token)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof refstore ctl:", err)
		return 2
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	var out any
	switch verb, rest := fs.Arg(0), fs.Args()[1:]; {
	case verb == "blocklist" && len(rest) == 0:
		out, err = c.Blocklist(ctx)
	case verb == "clients" && len(rest) == 0:
		out, err = c.Clients(ctx)
	case verb == "stats" && len(rest) == 0:
		out, err = c.Stats(ctx)
	case verb == "set":
		out, err = c.SetBlocklist(ctx, rest)
	case verb == "dump" && len(rest) == 1 && slices.Contains(refstore.LogNames, rest[0]):
		if err = c.CopyLog(ctx, rest[0], os.Stdout); err == nil {
			return 0
		}
	default:
		fs.Usage()
		return 2
	}
	var se *refstore.StatusError
	switch {
	case errors.As(err, &se) && se.Code/100 == 4:
		fmt.Fprintln(os.Stderr, "fenceproof refstore ctl:", err)
		return 2
	case err != nil:
		fmt.Fprintln(os.Stderr, "fenceproof refstore ctl:", err)
		return 1
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.Encode(out)
	return 0
}
