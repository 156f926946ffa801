package redistest_test

import "os"

func envSet(name string) bool { return os.Getenv(name) != "" }
