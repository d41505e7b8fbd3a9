// Package pathwriter is the writer contract's writer for a mounted path (a
// PersistentVolume): numbered, checksummed 4 KiB records written with
// O_DIRECT|O_DSYNC, so that an acknowledged write is on the storage, not in
// a page cache, and a reader on another node finds it there.
//
// A writer writes record seq into slot seq-start of its file
// <dir>/<id>.<start>.fpr (start: its first sequence, the unix time in µs
// when it started, so a restarted or moved writer never reuses a number
// nor a file). A slot is one block: the contract's record line
// (fencing/contract), a newline, a filler derived from the sequence, and a
// CRC-32C of all of it in the last four bytes. ReadBack reads every file of
// the writers asked for, block by block: an all-zero block was never
// written; any other block is a record, intact or damaged.
package pathwriter

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/fenceproof/fenceproof/fencing/contract"
	"github.com/fenceproof/fenceproof/refstore/writer"
)

// BlockSize is the size of one record on disk: a multiple of every logical
// block size O_DIRECT may require.
const BlockSize = 4096

// fileExt ends every writer's file.
const fileExt = ".fpr"

// Options configures a writer.
type Options struct {
	Dir        string        // the mounted path
	ID         string        // writer id (contract.ValidName)
	Node       string        // the node it runs on
	Interval   time.Duration // between writes; default 20ms
	MaxBackoff time.Duration // cap of the pause after a failed write (doubling from Interval); default 1s
	StartSeq   uint64        // first sequence; default the unix time in µs
	Log        io.Writer     // attempt lines; nil = discarded
}

// Writer writes records until its context ends.
type Writer struct {
	o     Options
	clock contract.Clock
	log   *writer.AttemptLog
	path  string
	f     *os.File
	buf   []byte // one BlockSize block, aligned for O_DIRECT
}

// New checks the options and names the writer's file (opened by Run).
func New(o Options) (*Writer, error) {
	if !contract.ValidName(o.ID) || !contract.ValidName(o.Node) {
		return nil, fmt.Errorf("writer id %q and node %q: want 1-253 characters of [A-Za-z0-9._:-] each", o.ID, o.Node)
	}
	if st, err := os.Stat(o.Dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("directory %q: not a directory (%v)", o.Dir, err)
	}
	if o.Interval <= 0 {
		o.Interval = 20 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = time.Second
	}
	if o.StartSeq == 0 {
		o.StartSeq = uint64(time.Now().UnixMicro())
	}
	return &Writer{o: o, clock: contract.NewClock(), log: writer.NewAttemptLog(o.Log),
		path: filepath.Join(o.Dir, o.ID+"."+strconv.FormatUint(o.StartSeq, 10)+fileExt), buf: alignedBlock()}, nil
}

// Path is the writer's file.
func (w *Writer) Path() string { return w.path }

// Counts returns the attempts per outcome so far.
func (w *Writer) Counts() map[string]int { return w.log.Counts() }

// Run writes one record per interval until ctx ends, reopening the file
// after a failure (backoff doubling up to MaxBackoff); it returns ctx's
// error or a log write error. A write in progress when ctx ends is
// finished and logged.
func (w *Writer) Run(ctx context.Context) error {
	defer w.close()
	backoff := time.Duration(0)
	t := time.NewTimer(0)
	defer t.Stop()
	for seq := w.o.StartSeq; ; seq++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		a := w.attempt(seq)
		if err := w.log.Record(a); err != nil {
			return err
		}
		wait := w.o.Interval
		if a.Outcome != contract.OutcomeOK {
			w.close()
			backoff = min(max(2*backoff, w.o.Interval), w.o.MaxBackoff)
			wait = backoff
		} else {
			backoff = 0
		}
		t.Reset(wait)
	}
}

func (w *Writer) attempt(seq uint64) contract.Attempt {
	a := contract.Attempt{Client: w.o.ID, Node: w.o.Node, Seq: seq}
	a.SendNs, a.SendMonoNs = w.clock.Now()
	err := w.write(seq, a.SendNs)
	a.TNs, a.MonoNs = w.clock.Now()
	a.Outcome, a.Reason = Classify(err)
	return a
}

func (w *Writer) write(seq uint64, startNs int64) error {
	if w.f == nil {
		f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_CREATE|directFlags, 0o644)
		if err != nil {
			return err
		}
		w.f = f
	}
	EncodeBlock(w.buf, contract.Record{Writer: w.o.ID, Seq: seq, Node: w.o.Node, StartNs: startNs})
	n, err := w.f.WriteAt(w.buf, int64(seq-w.o.StartSeq)*BlockSize)
	if err == nil && n != BlockSize {
		err = fmt.Errorf("short write: %d of %d bytes", n, BlockSize)
	}
	return err
}

func (w *Writer) close() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}

// Classify maps a write's error to the contract's outcome: the errors a
// fenced file system answers with for a write it did not take (EACCES and
// EPERM from a server that fences by export rules, EROFS from one that goes
// read-only, ESHUTDOWN, which Linux's Ceph clients return as EBLOCKLISTED)
// are refusals; anything else (EIO, a timeout) is an error.
func Classify(err error) (outcome, reason string) {
	if err == nil {
		return contract.OutcomeOK, ""
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.EACCES, syscall.EPERM, syscall.EROFS, syscall.ESHUTDOWN:
			return contract.OutcomeRefused, err.Error()
		}
	}
	return contract.OutcomeError, err.Error()
}

// alignedBlock returns a BlockSize slice aligned to BlockSize (O_DIRECT).
func alignedBlock() []byte {
	b := make([]byte, 2*BlockSize)
	off := int(BlockSize - uintptr(unsafe.Pointer(&b[0]))%BlockSize)
	return b[off%BlockSize : off%BlockSize+BlockSize]
}

// EncodeBlock fills block (BlockSize bytes) with record r: its line, a
// newline, a filler derived from its sequence, and the CRC-32C of
// everything before the last four bytes.
func EncodeBlock(block []byte, r contract.Record) {
	n := copy(block, r.Encode()+"\n")
	for i := n; i < BlockSize-4; i++ {
		block[i] = byte('a' + (r.Seq+uint64(i))%26)
	}
	binary.LittleEndian.PutUint32(block[BlockSize-4:], contract.Checksum(block[:BlockSize-4]))
}

// DecodeBlock reads the block of writer id's slot whose sequence is seq.
// ok is false for an all-zero block (never written).
func DecodeBlock(block []byte, id string, seq uint64) (r contract.Record, ok bool) {
	if !slices.ContainsFunc(block, func(b byte) bool { return b != 0 }) {
		return contract.Record{}, false
	}
	bad := func(why string) (contract.Record, bool) {
		return contract.Record{Writer: id, Seq: seq, Detail: why}, true
	}
	if binary.LittleEndian.Uint32(block[BlockSize-4:]) != contract.Checksum(block[:BlockSize-4]) {
		return bad("block checksum mismatch")
	}
	line, _, found := bytes.Cut(block[:BlockSize-4], []byte("\n"))
	if !found {
		return bad("no record line in the block")
	}
	r, err := contract.Decode(string(line))
	if err != nil {
		return bad(err.Error())
	}
	if r.Writer != id || r.Seq != seq {
		r.Intact = false
		r.Detail = strings.TrimPrefix(r.Detail+fmt.Sprintf(", record of %s seq %d in the slot of %s seq %d", r.Writer, r.Seq, id, seq), ", ")
		r.Writer, r.Seq = id, seq
	}
	return r, true
}

// ReadBack reads every record of the writers ids in dir (the contract's
// read mode).
func ReadBack(dir string, ids []string) ([]contract.Record, contract.ReadDone, error) {
	var out []contract.Record
	done := contract.ReadDone{Done: true}
	block := alignedBlock()
	for _, id := range ids {
		files, err := filepath.Glob(filepath.Join(dir, id+".*"+fileExt))
		if err != nil {
			return out, done, err
		}
		for _, path := range files {
			start, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), id+"."), fileExt), 10, 64)
			if err != nil {
				continue // another writer's file whose id starts with this one's
			}
			recs, err := readFile(path, id, start, block)
			if err != nil {
				return out, done, err
			}
			out = append(out, recs...)
		}
		done.Writers = append(done.Writers, id)
	}
	done.Records = len(out)
	return out, done, nil
}

// readFile reads one writer's file with O_DIRECT (the storage's copy, not
// a page cache a writer on this node may have left).
func readFile(path, id string, start uint64, block []byte) ([]contract.Record, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|readFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []contract.Record
	for slot := int64(0); ; slot++ {
		n, err := f.ReadAt(block, slot*BlockSize)
		if n < BlockSize {
			if n > 0 {
				out = append(out, contract.Record{Writer: id, Seq: start + uint64(slot), Detail: fmt.Sprintf("torn block: %d bytes", n),
					Where: fmt.Sprintf("%s@%d", filepath.Base(path), slot*BlockSize)})
			}
			if err == io.EOF || err == nil {
				return out, nil
			}
			return out, fmt.Errorf("reading %s at %d: %w", path, slot*BlockSize, err)
		}
		if r, ok := DecodeBlock(block, id, start+uint64(slot)); ok {
			r.Where = fmt.Sprintf("%s@%d", filepath.Base(path), slot*BlockSize)
			out = append(out, r)
		}
	}
}
