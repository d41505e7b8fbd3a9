package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/isolation/probeline"
)

// runConnect implements `probe connect`.
func runConnect(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("connect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	proto := fs.String("proto", "tcp", "tcp or udp")
	to := fs.String("to", "", "HOST:PORT to reach")
	timeout := fs.Duration("timeout", time.Second, "how long to wait for the connection and the reply")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "probe connect: unexpected arguments %q\n", fs.Args())
		return exitUsage
	case *proto != "tcp" && *proto != "udp":
		fmt.Fprintf(stderr, "probe connect: --proto must be tcp or udp, not %q\n", *proto)
		return exitUsage
	case *timeout <= 0:
		fmt.Fprintln(stderr, "probe connect: --timeout must be positive")
		return exitUsage
	}
	if _, _, err := net.SplitHostPort(*to); err != nil {
		fmt.Fprintf(stderr, "probe connect: --to must be HOST:PORT: %v\n", err)
		return exitUsage
	}
	r := connect(*proto, *to, *timeout)
	fmt.Fprintln(stdout, r.String())
	if r.OK {
		return exitOK
	}
	return exitUnreachable
}

// connect makes one fresh connection and reads the reply; OK means the
// server's reply arrived within timeout.
func connect(proto, to string, timeout time.Duration) probeline.Line {
	r := probeline.Line{To: to, Proto: proto}
	start := time.Now()
	reply, err := exchange(proto, to, timeout, start.Add(timeout))
	r.Ms = time.Since(start).Milliseconds()
	r.Reply = strings.TrimSpace(reply)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.OK = true
	return r
}

func exchange(proto, to string, timeout time.Duration, deadline time.Time) (string, error) {
	conn, err := net.DialTimeout(proto, to, timeout)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(deadline); err != nil {
		return "", err
	}
	buf := make([]byte, 512)
	if proto == "udp" {
		if _, err := conn.Write([]byte("probe\n")); err != nil {
			return "", err
		}
		n, err := conn.Read(buf)
		if err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	// TCP: the server writes one line and closes.
	var sb strings.Builder
	for {
		n, err := conn.Read(buf)
		sb.Write(buf[:n])
		if err == io.EOF && sb.Len() > 0 {
			return sb.String(), nil
		}
		if err != nil {
			if err == io.EOF {
				return "", fmt.Errorf("connection closed without a reply")
			}
			return sb.String(), err
		}
		if strings.Contains(sb.String(), "\n") {
			return sb.String(), nil
		}
	}
}
