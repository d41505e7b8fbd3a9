package refstore

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/endpoint"
)

// Admin API paths (HTTP/JSON).
const (
	PathBlocklist = "/v1/blocklist" // GET: BlocklistBody; PUT BlocklistBody: SetResult
	PathClients   = "/v1/clients"   // GET: ClientsBody
	PathStats     = "/v1/stats"     // GET: Stats
	PathHealth    = "/healthz"      // GET: "ok"
	PathLogs      = "/v1/logs/"     // GET /v1/logs/{audit,enforce,refusals}: the file as it is now
)

// LogNames are the logs GET /v1/logs/NAME serves.
var LogNames = []string{"audit", "enforce", "refusals"}

// maxAdminBody bounds a PUT body.
const maxAdminBody = 8 << 20

// BlocklistBody is the JSON of GET and PUT /v1/blocklist.
type BlocklistBody struct {
	Generation uint64   `json:"generation,omitempty"`
	CIDRs      []string `json:"cidrs"`
}

// ClientsBody is the JSON of GET /v1/clients.
type ClientsBody struct {
	Clients []Client `json:"clients"`
}

// ErrorBody is the JSON of every non-2xx answer.
type ErrorBody struct {
	Error string `json:"error"`
}

// adminSocket is the socket path of the admin endpoint, which must be
// unix:///path.sock in the grammar of package endpoint (the TCP admin
// listener is Options.AdminTCP, with its token).
func adminSocket(admin string) (string, error) {
	ep, err := endpoint.Parse(admin, endpoint.Listen)
	if err != nil || ep.Scheme != endpoint.Unix {
		return "", fmt.Errorf("admin endpoint %q: want unix:///path.sock", admin)
	}
	return ep.Address, nil
}

func (s *Server) startAdmin() error {
	path := s.adminSock
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return fmt.Errorf("%s exists and is not a socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return fmt.Errorf("%s: another process is listening", path)
		}
		os.Remove(path)
	}
	ul, err := listenPrivate(path)
	if err != nil {
		return fmt.Errorf("admin listen %s: %w", path, err)
	}
	s.sockPath = path
	s.serveAdmin(ul, s.adminHandler(false))
	if s.o.AdminTCP != "" {
		tl, err := net.Listen("tcp", s.o.AdminTCP)
		if err != nil {
			ul.Close()
			return fmt.Errorf("admin listen %s: %w", s.o.AdminTCP, err)
		}
		s.adminTCP = tl.Addr()
		s.serveAdmin(tl, s.adminHandler(true))
	}
	return nil
}

func (s *Server) serveAdmin(l net.Listener, h http.Handler) {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second}
	s.admins = append(s.admins, hs)
	go func() {
		if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("admin serve", "addr", l.Addr().String(), "err", err)
		}
	}()
}

func (s *Server) adminHandler(needToken bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathBlocklist, func(w http.ResponseWriter, r *http.Request) {
		b := s.current()
		writeJSON(w, http.StatusOK, BlocklistBody{Generation: b.Generation, CIDRs: b.Strings()})
	})
	mux.HandleFunc("PUT "+PathBlocklist, func(w http.ResponseWriter, r *http.Request) {
		var body BlocklistBody
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAdminBody))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			writeJSON(w, http.StatusBadRequest, ErrorBody{fmt.Sprintf("body is not a JSON blocklist {\"cidrs\":[...]}: %v; the blocklist is unchanged", err)})
			return
		}
		if body.CIDRs == nil {
			writeJSON(w, http.StatusBadRequest, ErrorBody{`"cidrs" is missing (send [] to clear the blocklist); the blocklist is unchanged`})
			return
		}
		res, err := s.SetBlocklist(body.CIDRs)
		var ie *InputError
		switch {
		case errors.As(err, &ie):
			writeJSON(w, http.StatusBadRequest, ErrorBody{err.Error() + "; the blocklist is unchanged"})
		case err != nil:
			writeJSON(w, http.StatusInternalServerError, ErrorBody{err.Error()})
		default:
			writeJSON(w, http.StatusOK, res)
		}
	})
	mux.HandleFunc("GET "+PathClients, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, ClientsBody{Clients: s.Clients()})
	})
	mux.HandleFunc("GET "+PathStats, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Stats())
	})
	mux.HandleFunc("GET "+PathLogs+"{name}", func(w http.ResponseWriter, r *http.Request) {
		path := map[string]string{"audit": s.o.AuditPath, "enforce": s.o.EnforcePath, "refusals": s.o.RefusalsPath}[r.PathValue("name")]
		if path == "" {
			writeJSON(w, http.StatusNotFound, ErrorBody{"unknown log; want one of " + strings.Join(LogNames, ", ")})
			return
		}
		f, err := os.Open(path)
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, ErrorBody{err.Error()})
			return
		}
		defer f.Close()
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.Copy(w, f)
	})
	mux.HandleFunc("GET "+PathHealth, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok\n")
	})
	if !needToken {
		return mux
	}
	want := []byte("Bearer " + s.token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			writeJSON(w, http.StatusUnauthorized, ErrorBody{"missing or wrong bearer token"})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// AdminClient talks to a refstore admin endpoint.
type AdminClient struct {
	base  string
	token string
	hc    *http.Client
}

// NewAdminClient returns a client for the admin endpoint admin,
// unix:///path.sock or tcp://host:port in the grammar of package endpoint
// (the latter needs the token of --admin-token-file).
func NewAdminClient(admin, token string) (*AdminClient, error) {
	ep, err := endpoint.Parse(admin, endpoint.Dial)
	if err != nil {
		return nil, fmt.Errorf("admin %w", err)
	}
	tr := &http.Transport{MaxIdleConns: 2, IdleConnTimeout: 30 * time.Second}
	c := &AdminClient{token: token, hc: &http.Client{Transport: tr}}
	if ep.Scheme == endpoint.TCP {
		if token == "" {
			return nil, errors.New("a tcp:// admin endpoint needs a token")
		}
		c.base = "http://" + ep.Address
		return c, nil
	}
	tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", ep.Address)
	}
	c.base = "http://refstore"
	return c, nil
}

// SetBlocklist replaces the whole blocklist and returns once refstore
// enforces it.
func (c *AdminClient) SetBlocklist(ctx context.Context, cidrs []string) (SetResult, error) {
	if cidrs == nil {
		cidrs = []string{}
	}
	var res SetResult
	err := c.do(ctx, http.MethodPut, PathBlocklist, BlocklistBody{CIDRs: cidrs}, &res)
	return res, err
}

// Blocklist reads the list in force.
func (c *AdminClient) Blocklist(ctx context.Context) (BlocklistBody, error) {
	var b BlocklistBody
	err := c.do(ctx, http.MethodGet, PathBlocklist, nil, &b)
	return b, err
}

// Clients lists the open sessions.
func (c *AdminClient) Clients(ctx context.Context) ([]Client, error) {
	var b ClientsBody
	err := c.do(ctx, http.MethodGet, PathClients, nil, &b)
	return b.Clients, err
}

// Stats reads the counters.
func (c *AdminClient) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := c.do(ctx, http.MethodGet, PathStats, nil, &st)
	return st, err
}

// CopyLog copies refstore's log NAME (one of LogNames) to w: the way to
// get the audit log out of a container that has no shell.
func (c *AdminClient) CopyLog(ctx context.Context, name string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+PathLogs+name, nil)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("refstore admin GET %s%s: %w", PathLogs, name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var eb ErrorBody
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if json.Unmarshal(raw, &eb) != nil || eb.Error == "" {
			eb.Error = strings.TrimSpace(string(raw))
		}
		return &StatusError{Code: resp.StatusCode, Message: eb.Error}
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

// StatusError is a non-2xx admin answer.
type StatusError struct {
	Code    int
	Message string
}

func (e *StatusError) Error() string { return fmt.Sprintf("refstore admin: %d: %s", e.Code, e.Message) }

func (c *AdminClient) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("refstore admin %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAdminBody))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var eb ErrorBody
		if json.Unmarshal(raw, &eb) != nil || eb.Error == "" {
			eb.Error = strings.TrimSpace(string(raw))
		}
		return &StatusError{Code: resp.StatusCode, Message: eb.Error}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("refstore admin %s %s: bad answer: %w", method, path, err)
	}
	return nil
}

// Close releases idle connections.
func (c *AdminClient) Close() { c.hc.CloseIdleConnections() }
