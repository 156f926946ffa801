// Package readme holds the test that compiles the Go code of the README's
// usage section: the section is written for reading (no error checks), so
// the test wraps it in a function, with the imports it needs, and compiles it
// inside this module with the go command.
package readme
