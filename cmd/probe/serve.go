package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// runServe implements `probe serve`.
func runServe(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tcpList := fs.String("tcp", "", "comma-separated TCP ports to serve, e.g. 80,81")
	udpList := fs.String("udp", "", "comma-separated UDP ports to serve, e.g. 80,81")
	replyPeer := fs.Bool("reply-peer", false, `append the client's address as this server sees it to the reply: "ok <hostname> from <ip>" (shows whether the network translated the source)`)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "probe serve: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	tcpPorts, err := parsePorts(*tcpList)
	if err != nil {
		fmt.Fprintf(stderr, "probe serve: --tcp: %v\n", err)
		return exitUsage
	}
	udpPorts, err := parsePorts(*udpList)
	if err != nil {
		fmt.Fprintf(stderr, "probe serve: --udp: %v\n", err)
		return exitUsage
	}
	if len(tcpPorts)+len(udpPorts) == 0 {
		fmt.Fprintln(stderr, "probe serve: give at least one port with --tcp or --udp")
		return exitUsage
	}

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	hostname, _ := os.Hostname()
	srv, err := listen("", hostname, tcpPorts, udpPorts, logger)
	if err != nil {
		logger.Error("listen", "err", err)
		return exitUnreachable
	}
	srv.replyPeer = *replyPeer
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv.serve(ctx)
	logger.Info("stopped")
	return exitOK
}

// parsePorts parses "80,81" into ports; the empty string is no ports.
func parsePorts(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var ports []int
	for _, f := range strings.Split(s, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < 0 || p > 65535 {
			return nil, fmt.Errorf("bad port %q", f)
		}
		ports = append(ports, p)
	}
	return ports, nil
}

// server holds the listeners of `probe serve`.
type server struct {
	reply []byte
	// replyPeer appends " from <client ip>" to the reply.
	replyPeer bool
	log       *slog.Logger
	tcp       []net.Listener
	udp       []net.PacketConn
	closed    sync.Once
}

// listen opens every port on host ("" is all addresses). Port 0 picks a free
// port (tests use it; the bound addresses are in s.tcp and s.udp).
func listen(host, hostname string, tcpPorts, udpPorts []int, log *slog.Logger) (*server, error) {
	s := &server{reply: []byte("ok " + hostname + "\n"), log: log}
	for _, p := range tcpPorts {
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err != nil {
			s.close()
			return nil, err
		}
		s.tcp = append(s.tcp, l)
	}
	for _, p := range udpPorts {
		c, err := net.ListenPacket("udp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err != nil {
			s.close()
			return nil, err
		}
		s.udp = append(s.udp, c)
	}
	return s, nil
}

func (s *server) close() {
	s.closed.Do(func() {
		for _, l := range s.tcp {
			l.Close()
		}
		for _, c := range s.udp {
			c.Close()
		}
	})
}

// serve answers on every listener until ctx is done, then closes them.
func (s *server) serve(ctx context.Context) {
	var wg sync.WaitGroup
	for _, l := range s.tcp {
		s.log.Info("serving", "proto", "tcp", "addr", l.Addr().String())
		wg.Add(1)
		go func() { defer wg.Done(); s.serveTCP(l) }()
	}
	for _, c := range s.udp {
		s.log.Info("serving", "proto", "udp", "addr", c.LocalAddr().String())
		wg.Add(1)
		go func() { defer wg.Done(); s.serveUDP(c) }()
	}
	<-ctx.Done()
	s.close()
	wg.Wait()
}

func (s *server) serveTCP(l net.Listener) {
	for {
		conn, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("accept", "err", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		s.log.Info("tcp", "from", conn.RemoteAddr().String(), "port", l.Addr().(*net.TCPAddr).Port)
		conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		conn.Write(s.replyTo(conn.RemoteAddr()))
		conn.Close()
	}
}

func (s *server) serveUDP(c net.PacketConn) {
	buf := make([]byte, 2048)
	for {
		_, from, err := c.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("udp read", "err", err)
			continue
		}
		s.log.Info("udp", "from", from.String(), "port", c.LocalAddr().(*net.UDPAddr).Port)
		if _, err := c.WriteTo(s.replyTo(from), from); err != nil {
			s.log.Warn("udp reply", "err", err)
		}
	}
}

// replyTo is the reply to a client: "ok <hostname>\n", with replyPeer
// "ok <hostname> from <client ip>\n".
func (s *server) replyTo(client net.Addr) []byte {
	if !s.replyPeer {
		return s.reply
	}
	host, _, err := net.SplitHostPort(client.String())
	if err != nil {
		host = client.String()
	}
	return []byte(strings.TrimSuffix(string(s.reply), "\n") + " from " + host + "\n")
}
