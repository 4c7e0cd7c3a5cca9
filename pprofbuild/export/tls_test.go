package export_test

import (
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/pprofbuild/export"
	collectorv1 "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/proto"
)

// testPKI is a CA, a server certificate for 127.0.0.1 and a client
// certificate it signed, as PEM files in dir.
type testPKI struct {
	caFile, certFile, keyFile string
	pool                      *x509.CertPool
	server                    tls.Certificate
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "leaf"},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, k
	}
	write := func(name, typ string, der []byte) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	p := &testPKI{pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.caFile = write("ca.pem", "CERTIFICATE", caDER)
	sDER, sKey := leaf(2, x509.ExtKeyUsageServerAuth)
	p.server = tls.Certificate{Certificate: [][]byte{sDER}, PrivateKey: sKey}
	cDER, cKey := leaf(3, x509.ExtKeyUsageClientAuth)
	p.certFile = write("client.pem", "CERTIFICATE", cDER)
	kDER, _ := x509.MarshalECPrivateKey(cKey)
	p.keyFile = write("client-key.pem", "EC PRIVATE KEY", kDER)
	return p
}

// serverTLS asks for and checks a client certificate.
func (p *testPKI) serverTLS() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{p.server}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: p.pool}
}

// OTLP over TLS with a client certificate, configured by the variables
// OTEL_EXPORTER_OTLP_CERTIFICATE, _CLIENT_CERTIFICATE and _CLIENT_KEY:
// gRPC (HTTP/2 negotiated by ALPN) to grpc-go's server and HTTP to net/http's,
// both refusing a client without the certificate.
func TestOTLPTLS(t *testing.T) {
	pki := newTestPKI(t)

	s := &profilesServer{answer: func(context.Context, *collectorv1.ExportProfilesServiceRequest) (*collectorv1.ExportProfilesServiceResponse, error) {
		return &collectorv1.ExportProfilesServiceResponse{}, nil
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(pki.serverTLS())))
	collectorv1.RegisterProfilesServiceServer(gs, s)
	go gs.Serve(ln)
	defer gs.Stop()

	var httpGot int
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, _ := io.ReadAll(body)
		var req collectorv1.ExportProfilesServiceRequest
		if proto.Unmarshal(b, &req) == nil {
			httpGot++
		}
	}))
	hs.TLS = pki.serverTLS()
	hs.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	hs.StartTLS()
	defer hs.Close()

	p, _ := testProfile(t, "cpu", 1)
	for _, tc := range []struct{ proto, endpoint string }{
		{"grpc", "https://" + ln.Addr().String()},
		{"http/protobuf", hs.URL},
	} {
		t.Run(strings.ReplaceAll(tc.proto, "/", "-"), func(t *testing.T) {
			send := func(withClient bool) error {
				t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", tc.proto)
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", tc.endpoint)
				t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", pki.caFile)
				cert, key := "", ""
				if withClient {
					cert, key = pki.certFile, pki.keyFile
				}
				t.Setenv("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", cert)
				t.Setenv("OTEL_EXPORTER_OTLP_CLIENT_KEY", key)
				o, _, err := export.OTLPOptionsFromEnv()
				if err != nil {
					t.Fatal(err)
				}
				o.Resource = resource(t)
				c, err := export.NewOTLP(o)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				return c.Send(ctx, []*export.Profile{p})
			}
			if err := send(false); err == nil {
				t.Errorf("sent without a client certificate to a server that asks for one")
			}
			if err := send(true); err != nil {
				t.Fatalf("with the client certificate: %v", err)
			}
		})
	}
	if len(s.md) != 1 || httpGot != 1 {
		t.Errorf("requests received: gRPC %d, HTTP %d; want 1 each", len(s.md), httpGot)
	}
}

// The TLS variables' mistakes are errors that name the variable.
func TestOTLPTLSEnvErrors(t *testing.T) {
	pki := newTestPKI(t)
	notPEM := filepath.Join(t.TempDir(), "x.pem")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"}, "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{map[string]string{"OTEL_EXPORTER_OTLP_PROFILES_CERTIFICATE": notPEM}, "OTEL_EXPORTER_OTLP_PROFILES_CERTIFICATE"},
		{map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": pki.certFile}, "without OTEL_EXPORTER_OTLP_CLIENT_KEY"},
		{map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_KEY": pki.keyFile}, "without OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"},
		{map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": pki.keyFile, "OTEL_EXPORTER_OTLP_CLIENT_KEY": pki.certFile}, "OTEL_EXPORTER_OTLP_CLIENT_KEY"},
	} {
		for _, v := range []string{"CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY"} {
			t.Setenv("OTEL_EXPORTER_OTLP_"+v, "")
			t.Setenv("OTEL_EXPORTER_OTLP_PROFILES_"+v, "")
		}
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		_, _, err := export.OTLPOptionsFromEnv()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error naming %s", tc.env, err, tc.want)
		}
	}
}
