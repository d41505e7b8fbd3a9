package main

import (
	"bytes"
	"context"
	"encoding/json"

	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/isolation/probeline"
)

// startServer serves one TCP and one UDP port (chosen by the kernel) on
// loopback and returns their addresses.
func startServer(t *testing.T) (tcpAddr, udpAddr string) {
	t.Helper()
	srv, err := listen("127.0.0.1", "test-host", []int{0}, []int{0}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv.tcp[0].Addr().String(), srv.udp[0].LocalAddr().String()
}

// freePort returns a loopback address nobody listens on (TCP and UDP).
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// runConnectJSON runs `probe connect` and decodes its JSON line.
func runConnectJSON(t *testing.T, args ...string) (int, probeline.Line) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"connect"}, args...), &out, &errb)
	var r probeline.Line
	if code != exitUsage {
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 1 {
			t.Fatalf("want one JSON line, got %q (stderr %q)", out.String(), errb.String())
		}
		if err := json.Unmarshal([]byte(lines[0]), &r); err != nil {
			t.Fatalf("bad JSON %q: %v", lines[0], err)
		}
	}
	return code, r
}

func TestConnectReachesServer(t *testing.T) {
	tcpAddr, udpAddr := startServer(t)
	for _, tc := range []struct{ proto, addr string }{{"tcp", tcpAddr}, {"udp", udpAddr}} {
		t.Run(tc.proto, func(t *testing.T) {
			code, r := runConnectJSON(t, "--proto", tc.proto, "--to", tc.addr, "--timeout", "2s")
			if code != exitOK || !r.OK {
				t.Fatalf("exit %d, result %+v: want reachable", code, r)
			}
			if r.Reply != "ok test-host" || r.To != tc.addr || r.Proto != tc.proto || r.Error != "" {
				t.Errorf("result %+v: want reply %q to %s over %s and no error", r, "ok test-host", tc.addr, tc.proto)
			}
		})
	}
}

func TestConnectUnreachable(t *testing.T) {
	addr := freePort(t)
	for _, proto := range []string{"tcp", "udp"} {
		t.Run(proto, func(t *testing.T) {
			start := time.Now()
			code, r := runConnectJSON(t, "--proto", proto, "--to", addr, "--timeout", "300ms")
			if code != exitUnreachable || r.OK || r.Error == "" {
				t.Fatalf("exit %d, result %+v: want unreachable with an error", code, r)
			}
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("took %v, want about the timeout", el)
			}
		})
	}
}

func TestConnectTimeoutOnSilentUDP(t *testing.T) {
	// A UDP socket that never answers: connect must give up after --timeout.
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	code, r := runConnectJSON(t, "--proto", "udp", "--to", c.LocalAddr().String(), "--timeout", "200ms")
	if code != exitUnreachable || r.OK {
		t.Fatalf("exit %d, result %+v: want unreachable", code, r)
	}
	if el := time.Since(start); el < 150*time.Millisecond || el > 2*time.Second {
		t.Errorf("took %v, want about 200ms", el)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"bogus"},
		{"connect"},
		{"connect", "--to", "nohostport"},
		{"connect", "--proto", "sctp", "--to", "127.0.0.1:80"},
		{"connect", "--to", "127.0.0.1:80", "--timeout", "0s"},
		{"connect", "--to", "127.0.0.1:80", "extra"},
		{"connect-all"},
		{"connect-all", "sctp:127.0.0.1:80"},
		{"connect-all", "tcp:nohostport"},
		{"connect-all", "127.0.0.1:80"},
		{"connect-all", "--parallel", "0", "tcp:127.0.0.1:80"},
		{"connect-all", "--timeout", "0s", "tcp:127.0.0.1:80"},
		{"serve"},
		{"serve", "--tcp", "80,x"},
		{"serve", "--udp", "70000"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != exitUsage {
			t.Errorf("probe %q: exit %d, want %d", args, code, exitUsage)
		}
	}
}

func TestParsePorts(t *testing.T) {
	got, err := parsePorts("80, 81")
	if err != nil || len(got) != 2 || got[0] != 80 || got[1] != 81 {
		t.Fatalf("parsePorts: %v %v", got, err)
	}
	if p, err := parsePorts(""); err != nil || p != nil {
		t.Fatalf("empty list: %v %v", p, err)
	}
}

func TestServeReplyPerDatagramAndConnection(t *testing.T) {
	tcpAddr, udpAddr := startServer(t)
	// Every TCP connection gets its own reply and is closed by the server.
	for i := 0; i < 3; i++ {
		c, err := net.DialTimeout("tcp", tcpAddr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(2 * time.Second))
		b, err := io.ReadAll(c)
		c.Close()
		if err != nil || string(b) != "ok test-host\n" {
			t.Fatalf("tcp connection %d: %q %v", i, b, err)
		}
	}
	// Every datagram on one UDP socket gets a reply.
	c, err := net.Dial("udp", udpAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 64)
	for i := 0; i < 3; i++ {
		if _, err := c.Write([]byte("x" + strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
		n, err := c.Read(buf)
		if err != nil || string(buf[:n]) != "ok test-host\n" {
			t.Fatalf("datagram %d: %q %v", i, buf[:n], err)
		}
	}
}

// TestServeReplyPeer: with --reply-peer the reply names the client's source
// address as the server saw it, over TCP and UDP; without it, it does not.
func TestServeReplyPeer(t *testing.T) {
	srv, err := listen("127.0.0.1", "test-host", []int{0}, []int{0}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	srv.replyPeer = true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	for _, tc := range []struct{ proto, addr string }{
		{"tcp", srv.tcp[0].Addr().String()}, {"udp", srv.udp[0].LocalAddr().String()},
	} {
		code, r := runConnectJSON(t, "--proto", tc.proto, "--to", tc.addr, "--timeout", "2s")
		if code != exitOK || r.Reply != "ok test-host from 127.0.0.1" {
			t.Errorf("%s: exit %d, reply %q: want \"ok test-host from 127.0.0.1\"", tc.proto, code, r.Reply)
		}
	}
	tcpAddr, _ := startServer(t)
	if _, r := runConnectJSON(t, "--to", tcpAddr, "--timeout", "2s"); r.Reply != "ok test-host" {
		t.Errorf("without --reply-peer: reply %q, want \"ok test-host\"", r.Reply)
	}
}

func TestConnectAllOneLinePerTargetInOrder(t *testing.T) {
	tcpAddr, udpAddr := startServer(t)
	down := freePort(t)
	targets := []string{"tcp:" + tcpAddr, "udp:" + down, "udp:" + udpAddr, "tcp:" + down, "tcp:" + tcpAddr}
	want := []bool{true, false, true, false, true}
	var out, errb bytes.Buffer
	code := run(append([]string{"connect-all", "--timeout", "500ms", "--parallel", "2"}, targets...), &out, &errb)
	if code != exitUnreachable {
		t.Fatalf("exit %d (stderr %q), want %d: two targets are down", code, errb.String(), exitUnreachable)
	}
	lines, err := probeline.ParseAll(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != len(targets) {
		t.Fatalf("%d lines for %d targets: %q", len(lines), len(targets), out.String())
	}
	for i, l := range lines {
		proto, to, _ := strings.Cut(targets[i], ":")
		if l.Proto != proto || l.To != to || l.OK != want[i] {
			t.Errorf("line %d = %+v, want %s to %s ok=%v", i, l, proto, to, want[i])
		}
		if l.OK && l.Reply != "ok test-host" {
			t.Errorf("line %d reply %q", i, l.Reply)
		}
	}
	out.Reset()
	if code := run([]string{"connect-all", "tcp:" + tcpAddr, "udp:" + udpAddr}, &out, &errb); code != exitOK {
		t.Fatalf("all reachable: exit %d, want 0: %s", code, out.String())
	}
}
