// Command fenceproof is the single entry point of the project: the conformance
// suite, the reference driver, the simulator and the report tools are its
// subcommands. Each subcommand lives in its own file and registers itself in
// init, so parts of the project never edit each other's files.
package main

import (
	"fmt"
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

func usage() {
	fmt.Fprintln(os.Stderr, "usage: fenceproof <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(os.Stderr, "\nRun 'fenceproof <command> -h' for a command's flags.")
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		os.Exit(2)
	}
	c, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "fenceproof: unknown command %q\n\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	os.Exit(c.run(os.Args[2:]))
}
