package export

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// OTLPOptionsFromEnv reads the OpenTelemetry exporter variables, as the
// OpenTelemetry SDKs do, the profiles-specific one winning over the
// general one:
//
//	OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL
//	    grpc or http/protobuf (default)
//	OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT
//	    used as it is (HTTP: the URL posted to)
//	OTEL_EXPORTER_OTLP_ENDPOINT
//	    the base URL: HTTP posts to it + "/v1development/profiles"
//	    (defaults http://localhost:4318 and, for gRPC, http://localhost:4317)
//	OTEL_EXPORTER_OTLP_PROFILES_HEADERS, OTEL_EXPORTER_OTLP_HEADERS
//	    key=value pairs separated by commas, values percent-encoded
//	OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION, OTEL_EXPORTER_OTLP_COMPRESSION
//	    gzip or none (default gzip)
//	OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT, OTEL_EXPORTER_OTLP_TIMEOUT
//	    milliseconds per request (default 10000)
//	OTEL_EXPORTER_OTLP_PROFILES_INSECURE, OTEL_EXPORTER_OTLP_INSECURE
//	    true: no TLS for a gRPC endpoint without a scheme
//	OTEL_EXPORTER_OTLP_PROFILES_CERTIFICATE, OTEL_EXPORTER_OTLP_CERTIFICATE
//	    a PEM file of the certificates to trust instead of the system's
//	OTEL_EXPORTER_OTLP_PROFILES_CLIENT_CERTIFICATE, OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE
//	OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY, OTEL_EXPORTER_OTLP_CLIENT_KEY
//	    PEM files of the client's certificate and its private key, for
//	    mutual TLS (both or neither)
//
// A malformed value is an error naming its variable. The timeout is
// returned apart, for Options.Timeout.
func OTLPOptionsFromEnv() (OTLPOptions, time.Duration, error) {
	get := func(name string) (string, string) {
		if v := os.Getenv("OTEL_EXPORTER_OTLP_PROFILES_" + name); v != "" {
			return v, "OTEL_EXPORTER_OTLP_PROFILES_" + name
		}
		return os.Getenv("OTEL_EXPORTER_OTLP_" + name), "OTEL_EXPORTER_OTLP_" + name
	}
	var o OTLPOptions
	proto, pname := get("PROTOCOL")
	switch proto {
	case "", ProtocolHTTP:
		o.Protocol = ProtocolHTTP
	case ProtocolGRPC:
		o.Protocol = ProtocolGRPC
	default:
		return o, 0, fmt.Errorf("%s=%q: want grpc or http/protobuf", pname, proto)
	}
	checkURL := func(name, v string) error {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s=%q: want an http:// or https:// URL", name, v)
		}
		return nil
	}
	if v := os.Getenv("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT"); v != "" {
		if err := checkURL("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", v); err != nil {
			return o, 0, err
		}
		o.Endpoint = v
	} else if v := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
		if err := checkURL("OTEL_EXPORTER_OTLP_ENDPOINT", v); err != nil {
			return o, 0, err
		}
		o.Endpoint = v
		if o.Protocol == ProtocolHTTP {
			o.Endpoint = strings.TrimSuffix(v, "/") + "/v1development/profiles"
		}
	} else if o.Protocol == ProtocolHTTP {
		o.Endpoint = "http://localhost:4318/v1development/profiles"
	} else {
		o.Endpoint = "http://localhost:4317"
	}
	h, hname := get("HEADERS")
	if strings.TrimSpace(h) != "" {
		var err error
		if o.Headers, err = ParseHeaders(h); err != nil {
			return o, 0, fmt.Errorf("%s: %v", hname, err)
		}
	}
	c, cname := get("COMPRESSION")
	switch c {
	case "", "gzip":
		o.Gzip = true
	case "none":
	default:
		return o, 0, fmt.Errorf("%s=%q: want gzip or none", cname, c)
	}
	var timeout time.Duration
	if t, tname := get("TIMEOUT"); t != "" {
		ms, err := strconv.Atoi(t)
		if err != nil || ms <= 0 {
			return o, 0, fmt.Errorf("%s=%q: want milliseconds > 0", tname, t)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	if v, iname := get("INSECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return o, 0, fmt.Errorf("%s=%q: want true or false", iname, v)
		}
		o.Insecure = b
	}
	var err error
	if o.TLS, err = tlsFromEnv(get); err != nil {
		return o, 0, err
	}
	return o, timeout, nil
}

// tlsFromEnv makes the TLS configuration the CERTIFICATE, CLIENT_CERTIFICATE
// and CLIENT_KEY variables ask for; nil if they ask for none.
func tlsFromEnv(get func(string) (string, string)) (*tls.Config, error) {
	ca, caName := get("CERTIFICATE")
	cert, certName := get("CLIENT_CERTIFICATE")
	key, keyName := get("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", caName, err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s=%q: no PEM certificate in it", caName, ca)
		}
	}
	switch {
	case cert != "" && key != "":
		kp, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s=%q, %s=%q: %v", certName, cert, keyName, key, err)
		}
		c.Certificates = []tls.Certificate{kp}
	case cert != "":
		return nil, fmt.Errorf("%s is set without %s", certName, keyName)
	case key != "":
		return nil, fmt.Errorf("%s is set without %s", keyName, certName)
	}
	return c, nil
}

// ParseHeaders parses OTEL_EXPORTER_OTLP_HEADERS' format: key=value pairs
// separated by commas, values percent-encoded.
func ParseHeaders(s string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n:") {
			return nil, fmt.Errorf("%q is not key=value", kv)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil || strings.ContainsAny(dv, "\r\n") {
			return nil, fmt.Errorf("value of %s: not a percent-encoded header value", k)
		}
		m[k] = dv
	}
	return m, nil
}
