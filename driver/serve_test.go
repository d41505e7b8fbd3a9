package driver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/endpoint"
)

// testPKI is a CA generated for one test, issuing server and client
// certificates.
type testPKI struct {
	ca    *x509.Certificate
	caKey *ecdsa.PrivateKey
	dir   string
}

func newPKI(t *testing.T) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fenceproof test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	p := &testPKI{ca: ca, caKey: key, dir: t.TempDir()}
	p.write(t, "ca.pem", "CERTIFICATE", der)
	return p
}

func (p *testPKI) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// issue writes a leaf certificate and key; server ones are for 127.0.0.1.
func (p *testPKI) issue(t *testing.T, name string, server bool) (certFile, keyFile string, pair tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = p.write(t, name+".pem", "CERTIFICATE", der), p.write(t, name+"-key.pem", "EC PRIVATE KEY", kder)
	pair, err = tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pair
}

func listOver(t *testing.T, addr string, creds credentials.TransportCredentials) error {
	t.Helper()
	ep, err := endpoint.Parse(addr, endpoint.Dial)
	if err != nil || ep.Scheme != endpoint.TCP {
		t.Fatalf("Start's address %q: %v, want tcp://host:port", addr, err)
	}
	conn, err := grpc.NewClient(ep.Address, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = fence.NewFenceControllerClient(conn).ListClusterFence(ctx(t), &fence.ListClusterFenceRequest{})
	return err
}

// TestTLS serves TCP with a server certificate and required client
// certificates from a CA generated here: a client with a certificate of the
// CA is served; one without a certificate, one trusting another CA and a
// plaintext one are refused.
func TestTLS(t *testing.T) {
	pki := newPKI(t)
	cert, key, _ := pki.issue(t, "server", true)
	_, _, clientPair := pki.issue(t, "client", false)
	d, err := New(t.Context(), Options{StatePath: filepath.Join(t.TempDir(), "s.db"),
		TLS: TLSFiles{Cert: cert, Key: key, ClientCA: filepath.Join(pki.dir, "ca.pem")}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	addr, err := d.Start("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(pki.ca)
	good := credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{clientPair}})
	if err := listOver(t, addr, good); err != nil {
		t.Fatalf("client with a CA certificate refused: %v", err)
	}
	noCert := credentials.NewTLS(&tls.Config{RootCAs: roots})
	if err := listOver(t, addr, noCert); err == nil {
		t.Error("client without a certificate served")
	}
	other := newPKI(t)
	_, _, otherPair := other.issue(t, "intruder", false)
	if err := listOver(t, addr, credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{otherPair}})); err == nil {
		t.Error("client with a certificate of another CA served")
	}
	if err := listOver(t, addr, insecure.NewCredentials()); err == nil {
		t.Error("plaintext client served over TLS")
	}

	half, err := New(t.Context(), Options{StatePath: filepath.Join(t.TempDir(), "x.db"), TLS: TLSFiles{Cert: cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer half.Stop()
	if _, err := half.Start("tcp://127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "key") {
		t.Errorf("a certificate without a key: %v, want an error naming the key", err)
	}
}

// TestBoundsBeforeWork: a request over the message limit is refused with
// RESOURCE_EXHAUSTED and nothing stored; a wrong-secret request logs its
// size and none of its values.
func TestBoundsBeforeWork(t *testing.T) {
	h := start(t, Options{Secrets: map[string]string{"userKey": "s3cret"}, MaxMessageBytes: 64 << 10})
	big := make([]string, 0, 10000)
	for i := range 10000 {
		big = append(big, net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)).String()+"/32")
	}
	_, err := h.f.FenceClusterNetwork(ctx(t), &fence.FenceClusterNetworkRequest{Cidrs: cidrs(big...), Secrets: map[string]string{"userKey": "s3cret"}})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("request over the limit: %v, want ResourceExhausted", err)
	}
	marker := "CLIENT-VALUE-" + strings.Repeat("x", 200)
	_, err = h.f.FenceClusterNetwork(ctx(t), &fence.FenceClusterNetworkRequest{Cidrs: cidrs("192.0.2.0/24", marker),
		Secrets: map[string]string{"userKey": "wrong", marker: marker}})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("wrong secret: %v", err)
	}
	_, err = h.f.FenceClusterNetwork(ctx(t), &fence.FenceClusterNetworkRequest{Cidrs: cidrs("192.0.2.0/24", marker),
		Secrets: map[string]string{"userKey": "s3cret"}})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("authenticated bad CIDR: %v", err)
	}
	logs := h.logs.String()
	if strings.Contains(logs, "CLIENT-VALUE-"+strings.Repeat("x", 100)) {
		t.Errorf("a client value was logged beyond the bound:\n%s", logs)
	}
	if !strings.Contains(logs, "request_bytes") {
		t.Errorf("the unauthenticated request's size was not logged:\n%s", logs)
	}
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "Unauthenticated") && strings.Contains(line, "CLIENT-VALUE") {
			t.Errorf("an unauthenticated request's value was logged: %s", line)
		}
	}
	if got := h.list2(t); len(got) != 0 {
		t.Fatalf("refused requests stored %v", got)
	}
}

func (h *harness) list2(t *testing.T) []string {
	resp, err := h.f.ListClusterFence(ctx(t), &fence.ListClusterFenceRequest{Secrets: map[string]string{"userKey": "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range resp.GetCidrs() {
		out = append(out, c.GetCidr())
	}
	return out
}
