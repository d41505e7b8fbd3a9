// Command fenceproof is the single entry point of the project: the conformance
// suite, the reference driver, the simulator and the report tools are its
// subcommands. Each subcommand lives in its own file and registers itself in
// init, so parts of the project never edit each other's files.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// command is one subcommand: a one-line summary and a run function that
// receives the arguments after the subcommand name and returns the exit code.
type command struct {
	summary string
	run     func(args []string) int
}

var commands = map[string]command{}

// register adds a subcommand; it is called from init functions.
func register(name, summary string, run func(args []string) int) {
	if _, dup := commands[name]; dup {
		panic("fenceproof: duplicate subcommand " + name)
	}
	commands[name] = command{summary: summary, run: run}
}

// usage lists the subcommands: on standard output when asked for (exit 0),
// on standard error after a usage error (exit 2).
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: fenceproof <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-18s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'fenceproof <command> -h' (or 'fenceproof help <command>') for a command's flags;\n'fenceproof --version' prints the version.")
}

// dispatch runs the command line args (without the program name) and
// returns the exit code: --help and help exit 0, --version is the version
// command, no command or an unknown one is a usage error (2).
func dispatch(args []string) int {
	if len(args) == 0 {
		usage(os.Stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(os.Stdout)
		return 0
	case "help":
		if len(args) == 1 {
			usage(os.Stdout)
			return 0
		}
		return dispatch([]string{args[1], "-h"})
	case "-version", "--version":
		args = []string{"version"}
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "fenceproof: unknown command %q\n\n", args[0])
		usage(os.Stderr)
		return 2
	}
	return c.run(args[1:])
}

func main() { os.Exit(dispatch(os.Args[1:])) }
