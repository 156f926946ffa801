package testctx

import "testing"

func TestContextEndsWithTheTest(t *testing.T) {
	var ctx interface{ Err() error }
	t.Run("inner", func(t *testing.T) {
		c := Context(t)
		if err := c.Err(); err != nil {
			t.Fatalf("live test: Err() = %v", err)
		}
		ctx = c
	})
	if ctx.Err() == nil {
		t.Fatal("context still live after its test ended")
	}
}
