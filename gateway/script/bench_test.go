package script

import (
	"context"
	"testing"
)

// BenchmarkStart is a script's fixed cost: a fresh engine, the API, a
// trivial body, the engine closed.
func BenchmarkStart(b *testing.B) {
	h := &fakeHost{}
	b.ReportAllocs()
	for b.Loop() {
		if r := Run(context.Background(), "b", `return 1`, h, Limits{}); r.Error != nil {
			b.Fatal(r.Error)
		}
	}
}

// BenchmarkTenCalls is a script's overhead for ten parallel calls of a
// tool that answers at once.
func BenchmarkTenCalls(b *testing.B) {
	h := &fakeHost{}
	b.ReportAllocs()
	for b.Loop() {
		r := Run(context.Background(), "b", `return (await Promise.all(Array.from({length: 10}, (_, i) => tools.call("echo", {i})))).length`, h, Limits{})
		if r.Error != nil || string(r.Value) != "10" {
			b.Fatal(r.Error, string(r.Value))
		}
	}
}
