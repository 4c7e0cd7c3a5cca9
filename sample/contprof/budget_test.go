package main

import (
	"testing"
	"time"
)

func TestBudgetSkip(t *testing.T) {
	const iv = 50 * time.Millisecond
	for _, c := range []struct {
		d      time.Duration
		budget float64
		want   int
	}{
		{500 * time.Microsecond, 0.02, 0}, // within 2% of 50 ms (1 ms)
		{time.Millisecond, 0.02, 0},
		{1500 * time.Microsecond, 0.02, 1}, // 1.5 ms over two ticks: 1.5%
		{10 * time.Millisecond, 0.02, 9},
		{time.Second, 0.02, 19}, // capped at a second of ticks
		{10 * time.Millisecond, 0, 0},
	} {
		if got := budgetSkip(c.d, iv, c.budget, 19); got != c.want {
			t.Errorf("budgetSkip(%v, %v, %v) = %d, want %d", c.d, iv, c.budget, got, c.want)
		}
	}
}
