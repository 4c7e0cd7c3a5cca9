package apmtest

import (
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// TestOTelShop records what OpenTelemetry .NET's own instrumentation of the
// shop (apps/shop/otel: ASP.NET Core, HttpClient, Npgsql and
// StackExchange.Redis instrumentation, OTLP/HTTP) gives for ShopSequence:
// the reference the SDK's integrations are compared with. It checks the
// shape every tracer must give: a server span per request, the checkout's
// trace crossing to the payment instance, the incoming traceparent
// continued.
func TestOTelShop(t *testing.T) {
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if ok, why := harness.ShopRuntime(rt); !ok {
			t.Skip(why)
		}
		got := OTelShop(t, rt)
		for i, tr := range got {
			t.Logf("trace %d:\n%s", i, tr.Render(RenderKeys...))
		}
		CheckShape(t, got)
	})
}
