package checkpoint

import "testing"

func FuzzJSONLoads(f *testing.F) {
	fuzzSeeds(f, JSONSerializer{})
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		fuzzLoads(t, JSONSerializer{}, typ, data)
	})
}
