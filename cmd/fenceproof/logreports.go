package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The lines around the archive log-reports prints; deploy/sanity-job/run.sh
// extracts what lies between them (the last pair, should there be more).
const (
	reportsBegin = "===== fenceproof reports: "
	reportsEnd   = "===== end of fenceproof reports ====="
)

// logRotationSize is the kubelet's default containerLogMaxSize: a log that
// grows past it is rotated, and kubectl logs shows only the newest file.
const logRotationSize = 10 << 20

func init() {
	register("log-reports", "run a fenceproof command, then print its reports directory on standard output as a base64 tar.gz (a Kubernetes Job's log is what kubectl fetches)", runLogReports)
}

func runLogReports(args []string) int {
	flags := flag.NewFlagSet("log-reports", flag.ContinueOnError)
	dir := flags.String("dir", "reports", "the reports directory of the command (give the command the same one)")
	flags.Usage = func() {
		fmt.Fprintln(flags.Output(), `usage: fenceproof log-reports [--dir DIR] -- COMMAND [ARGS...]

Runs 'fenceproof COMMAND ARGS...', then prints every file under DIR as a gzipped
tar, base64, between the lines
  `+reportsBegin+`DIR as base64 tar.gz, fenceproof VERSION, exit status N =====
  `+reportsEnd+`
and exits with the command's status. In a Kubernetes Job this leaves the reports
in the Job's log, where 'kubectl logs' fetches them with no volume, sidecar or
copy step; deploy/sanity-job/run.sh extracts them:
  kubectl logs job/fenceproof-sanity | awk ... | base64 -d | tar -xz

flags:`)
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	rest := flags.Args()
	if len(rest) == 0 {
		fmt.Fprintln(os.Stderr, "fenceproof log-reports: no command: want -- COMMAND [ARGS...]")
		return 2
	}
	c, ok := commands[rest[0]]
	if !ok || rest[0] == "log-reports" {
		fmt.Fprintf(os.Stderr, "fenceproof log-reports: %q is not a fenceproof command it can run\n", rest[0])
		return 2
	}
	code := c.run(rest[1:])
	if err := writeReportsArchive(os.Stdout, *dir, code); err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof log-reports: %v\n", err)
		if code == 0 {
			code = 1 // a run whose reports are lost has not passed
		}
	}
	return code
}

// writeReportsArchive prints dir's files as a base64 tar.gz between the
// marker lines; the begin line names the version and the command's exit
// status, so a log alone says what ran and how it ended.
func writeReportsArchive(w io.Writer, dir string, code int) error {
	var buf strings.Builder
	enc := base64.NewEncoder(base64.StdEncoding, &buf)
	if err := tarGz(enc, dir); err != nil {
		return fmt.Errorf("archiving %s: %w", dir, err)
	}
	if err := enc.Close(); err != nil {
		return err
	}
	b64 := buf.String()
	if len(b64) > logRotationSize/2 {
		fmt.Fprintf(os.Stderr, "fenceproof log-reports: the archive is %d bytes of base64, more than half the kubelet's default log rotation size (10 MiB): kubectl logs may miss its start\n", len(b64))
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%s%s as base64 tar.gz, fenceproof %s, exit status %d =====\n", reportsBegin, dir, version, code)
	for len(b64) > 76 {
		out.WriteString(b64[:76] + "\n")
		b64 = b64[76:]
	}
	if b64 != "" {
		out.WriteString(b64 + "\n")
	}
	out.WriteString(reportsEnd + "\n")
	_, err := io.WriteString(w, out.String())
	return err
}

// tarGz writes the regular files under dir, by their path relative to it,
// as a gzipped tar.
func tarGz(w io.Writer, dir string) error {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		// The command ended before it wrote a report (bad flags): an empty
		// archive still says so in the log.
		fmt.Fprintf(os.Stderr, "fenceproof log-reports: %s does not exist: the archive is empty\n", dir)
	} else if err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: info.Size(), ModTime: info.ModTime(), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = io.CopyN(tw, f, info.Size())
		return err
	}); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}
