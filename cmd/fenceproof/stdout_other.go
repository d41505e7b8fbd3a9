//go:build !unix

package main

// withStdoutSilenced runs f; without dup2 the dry run's output is not hidden.
func withStdoutSilenced(f func() error) error { return f() }
