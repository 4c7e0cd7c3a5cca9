package harness

import (
	"strings"
	"testing"
)

// TestShop starts the shop with PostgreSQL, Redis and the payment instance
// on every runtime that can run it, and walks a checkout through all of
// them: the stack the APM, cost and heap-snapshot tests stand on.
func TestShop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, Redis and two .NET processes")
	}
	ForEachRuntime(t, func(t *testing.T, rt Runtime) {
		if ok, why := ShopRuntime(rt); !ok {
			t.Skip(why)
		}
		s := StartShop(t, rt, ShopOptions{})
		if code, body := s.Get("/products/7"); code != 200 || !strings.Contains(body, "7") {
			t.Fatalf("GET /products/7: %d %s", code, body)
		}
		if code, body := s.Post("/cart/c1/items?product=5&qty=2"); code/100 != 2 {
			t.Fatalf("POST /cart/c1/items: %d %s", code, body)
		}
		code, body := s.Post("/checkout/c1")
		if code != 200 {
			t.Fatalf("POST /checkout/c1: %d %s\n%s", code, body, s.Logs())
		}
		t.Logf("checkout: %s", body)
		if code, _ := s.Get("/boom-async"); code != 500 {
			t.Errorf("GET /boom-async: %d, want 500", code)
		}
		_, stats := s.Get("/stats")
		t.Logf("stats: %s", stats)
		s.Stop()
	})
}
