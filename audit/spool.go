package audit

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// BatchID names one batch of rows for [OnceSink]: the id of the [Spool]
// that numbered it, and its number there. Numbers are never reused by a
// spool directory, across restarts too.
type BatchID struct {
	// Spool is the spool's id ([Spool.ID]).
	Spool string
	// Seq is the batch's number in that spool.
	Seq uint64
	// First is the index, in the batch numbered Seq, of the first row
	// written with this id: 0 for the whole batch. [Async] writes a batch
	// in parts when the store refuses a row of it ([ErrRowRefused]); each
	// part is written once, and a later write of the whole batch (a replay
	// after a restart) writes only the rows no part has written.
	First int
}

// OnceSink is a [Sink] that can write a batch at most once per [BatchID]:
// it records the id in a ledger in the same transaction as the rows, and a
// batch whose id is already there is skipped (and reported written). With
// a [Spool], [Async] writes every batch through it, so that a batch that
// was written but whose write looked failed (the connection broke during
// the commit), or that was replayed by a process killed before it could
// forget the batch, is not written twice. The SQL store in audit/sqlstore
// is one.
type OnceSink interface {
	Sink
	// WriteBatchOnce writes batch and records id in one transaction, or
	// does nothing when id is recorded already. batch is the rows
	// [id.First, id.First+len(batch)) of the batch numbered id.Seq: rows
	// of it that an earlier write recorded (under another First) are not
	// written again.
	WriteBatchOnce(ctx context.Context, id BatchID, batch []Record) error
	// ForgetBatches removes the ledger's ids of spool below seq: the spool
	// will never send them again.
	ForgetBatches(ctx context.Context, spool string, below uint64) error
}

// SpoolConfig configures [OpenSpool]. The zero value gives the defaults.
type SpoolConfig struct {
	// MaxBytes bounds the spool's files on disk. When a batch does not
	// fit, its rows are counted as dropped and logged, and the call is
	// answered as usual. Default 256 MiB.
	MaxBytes int64
	// SegmentBytes is the size at which the spool starts a new file; a file
	// is deleted once all its batches are in the store and it is full (or
	// the spool closes): the one being written is appended to meanwhile.
	// Default 4 MiB, at most MaxBytes/4.
	SegmentBytes int64
	// FallbackLogger is where the spool reports what it found on open (a
	// torn or corrupt file). The same knob as
	// [AsyncConfig.FallbackLogger]. Default slog.Default().
	FallbackLogger *slog.Logger
}

// ErrSpoolFull is returned (wrapped) when a batch does not fit in the
// spool's MaxBytes or on its disk.
var ErrSpoolFull = errors.New("the audit spool is full")

// Spool is a durable local queue of batches on disk, in one directory:
// append-only segment files of checksummed frames. [Async] puts batches in
// it when the store fails or is slow (or, with [DurabilityDisk], every
// row: each group commit appends a part to the batch being filled),
// and replays them into the store, oldest first, when it answers again. Open one with [OpenSpool] and pass it in [AsyncConfig.Spool]; the
// Async owns it from then on and closes it. Rows in the spool when the
// process stops are replayed by the next one that opens the directory.
//
// One process at a time may open a directory (a lock file says so).
type Spool struct {
	dir      string
	id       string
	maxBytes int64
	segBytes int64
	logger   *slog.Logger
	lock     *os.File

	mu       sync.Mutex
	segs     []*segment // oldest first; the last may be the one being written
	cur      *os.File   // the last segment, open for appending; nil before the first append
	pending  []*entry   // not yet acknowledged, oldest first
	size     int64      // bytes on disk
	rows     int        // rows in pending
	cached   int        // rows held decoded in memory, or room for them (an open batch's array)
	cacheMax int
	spare    [][]Record // the arrays of replayed open batches, for the next ones
	next     uint64     // the next batch number
	ceiling  uint64     // numbers below this are reserved on disk
	dirty    bool       // appended since the last fsync
	closed   bool
	// prealloc fills each new segment with zeros up front ([Async] sets
	// it for [DurabilityDisk], before the first batch): a frame written
	// into allocated blocks changes no metadata, so its datasync does not
	// wait for the file system's journal, and every call waits for one.
	prealloc bool
	// open is the batch addPart appends parts to, the last of pending;
	// nil when none is open. The writer does not replay it until it is
	// closed.
	open    *entry
	buf     []byte // addPart's frame, reused
	notify  chan struct{}
	loaders sync.WaitGroup // prefetch goroutines
}

type segment struct {
	num     uint64
	size    int64 // the frames' bytes: where the next frame goes
	alloc   int64 // the file's length: size, or more while zeros follow the frames
	minSeq  uint64
	pending int
}

type entry struct {
	seg   *segment
	off   int64
	n     int // the length of its frames (one, or the parts of an open batch, back to back)
	seq   uint64
	first int // the index of its first row in the batch seq numbers (BatchID.First)
	rows  int
	recs  []Record // decoded, or nil to read from disk
	held  int      // what recs counts against cacheMax: its rows, or an open batch's room
	reuse bool     // recs is an open batch's array, to reuse once the batch is in the store
	// loading is set while prefetch decodes recs.
	loading bool
}

// The frame format. A frame is the magic, the payload's length, a CRC-32C
// of what follows it (the sequence number, the first row's index and the
// payload), the batch's sequence number, the index in that batch of the
// frame's first row, and the payload: the rows as a JSON array of
// [Record]. "TMS" names the format and the fourth byte its version: fields
// added to Record are additive (an older reader ignores them), and any
// other change takes a new version, which an older toolmw refuses at open
// (errSpoolVersion) instead of taking the frames for damage and cutting
// them. Version 2 added the first row's index: with [DurabilityDisk] a
// batch is spooled in parts, one per group commit (see [Spool.addPart]).
// Version 1 frames (no index: a whole batch) are still read.
const (
	frameMagic    = framePrefix + "2"
	frameMagicV1  = framePrefix + "1"
	framePrefix   = "TMS"
	frameHeader   = 4 + 4 + 4 + 8 + 4 // magic, payload length, CRC-32C of seq, first and payload, seq, first
	frameHeaderV1 = 4 + 4 + 4 + 8     // magic, payload length, CRC-32C of seq and payload, seq
	seqReserve    = 1 << 16
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

var errSpoolVersion = errors.New("spool format version")

// OpenSpool opens the spool in dir, creating the directory if needed, and
// reads what a previous process left there. It fails at once, with an
// error naming the directory, when the directory cannot be created or
// written or another process holds it.
func OpenSpool(dir string, cfg SpoolConfig) (*Spool, error) {
	if dir == "" {
		return nil, errors.New("audit: spool: the directory is empty")
	}
	if cfg.MaxBytes < 0 || cfg.SegmentBytes < 0 {
		return nil, fmt.Errorf("audit: spool %q: SpoolConfig.MaxBytes and SegmentBytes must not be negative (zero means the default), got %d and %d", dir, cfg.MaxBytes, cfg.SegmentBytes)
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = 256 << 20
	}
	if cfg.SegmentBytes == 0 {
		cfg.SegmentBytes = 4 << 20
	}
	cfg.SegmentBytes = max(min(cfg.SegmentBytes, cfg.MaxBytes/4), 4096)
	if cfg.FallbackLogger == nil {
		cfg.FallbackLogger = slog.Default()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit: spool %q: cannot create the directory: %w (pass a writable directory)", dir, err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: spool %q: the directory is not writable: %w (pass a writable directory)", dir, err)
	}
	if err := lockFile(lock); err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("audit: spool %q: another process uses it: %w (give each process its own spool directory)", dir, err)
	}
	s := &Spool{dir: dir, maxBytes: cfg.MaxBytes, segBytes: cfg.SegmentBytes, logger: cfg.FallbackLogger, lock: lock,
		cacheMax: 16384, notify: make(chan struct{}, 1)}
	if err := s.load(); err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("audit: spool %q: %w", dir, err)
	}
	return s, nil
}

// load reads the id, the reserved numbers and the segments.
func (s *Spool) load() error {
	idPath := filepath.Join(s.dir, "id")
	b, err := os.ReadFile(idPath)
	switch {
	case errors.Is(err, os.ErrNotExist):
		var raw [16]byte
		_, _ = rand.Read(raw[:])
		s.id = hex.EncodeToString(raw[:])
		if err := writeFileSync(idPath, []byte(s.id+"\n")); err != nil {
			return fmt.Errorf("cannot write its id: %w", err)
		}
	case err != nil:
		return fmt.Errorf("cannot read its id: %w", err)
	default:
		s.id = strings.TrimSpace(string(b))
		if len(s.id) != 32 {
			return fmt.Errorf("the file %q is not a spool id (remove the directory if it is not a spool)", idPath)
		}
	}
	if b, err := os.ReadFile(filepath.Join(s.dir, "seq")); err == nil {
		s.next, _ = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cannot read the batch numbers: %w", err)
	}
	names, err := filepath.Glob(filepath.Join(s.dir, "*.seg"))
	if err != nil {
		return err
	}
	var nums []uint64
	for _, n := range names {
		if v, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(n), ".seg"), 16, 64); err == nil {
			nums = append(nums, v)
		}
	}
	slices.Sort(nums)
	for i, num := range nums {
		if err := s.scan(num, i == len(nums)-1); err != nil {
			return err
		}
	}
	return s.reserve()
}

// scan reads one segment's frames; a bad frame ends the segment (the last
// one is cut there: a torn write).
func (s *Spool) scan(num uint64, last bool) error {
	path := s.segPath(num)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("cannot open %q: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("cannot read %q: %w", path, err)
	}
	seg := &segment{num: num, minSeq: ^uint64(0)}
	off := 0
	var prev *entry
	for off < len(data) {
		seq, first, payload, n, ok := parseFrame(data[off:])
		if !ok {
			if v := data[off:]; len(v) >= 4 && string(v[:3]) == framePrefix && v[3] != frameMagic[3] && v[3] != frameMagicV1[3] && v[3] >= '0' && v[3] <= '9' {
				return fmt.Errorf("%q holds spool frames of format %s, written by another toolmw version; this one reads %s: "+
					"open the directory with the version that wrote it, or move it away: %w", path, v[:4], frameMagicV1+" and "+frameMagic, errSpoolVersion)
			}
			break
		}
		rows, ok := countRows(payload)
		if !ok {
			break
		}
		s.rows += rows
		if prev != nil && prev.seq == seq && prev.first+prev.rows == first && prev.off+int64(prev.n) == int64(off) {
			// The next part of the same batch: replayed with it, whole.
			prev.n += n
			prev.rows += rows
			off += n
			continue
		}
		prev = &entry{seg: seg, off: int64(off), n: n, seq: seq, first: first, rows: rows}
		s.pending = append(s.pending, prev)
		seg.pending++
		seg.minSeq = min(seg.minSeq, seq)
		s.next = max(s.next, seq+1)
		off += n
	}
	if off < len(data) {
		if !allZero(data[off:]) { // zeros are the unused end of a preallocated segment
			s.logger.LogAttrs(context.Background(), slog.LevelError, "toolmw/audit: spool segment damaged; the rest of it is skipped",
				slog.String("file", path), slog.Int("offset", off), slog.Int("bytes_skipped", len(data)-off))
		}
		if last {
			if err := f.Truncate(int64(off)); err != nil {
				return fmt.Errorf("cannot cut the torn end of %q: %w", path, err)
			}
			data = data[:off]
		}
	}
	seg.size = int64(len(data))
	seg.alloc = seg.size
	if seg.pending == 0 {
		return os.Remove(path)
	}
	s.segs = append(s.segs, seg)
	s.size += seg.alloc
	return nil
}

// allZero reports whether b holds only zero bytes.
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// parseFrame returns the frame at the start of b, of either version.
func parseFrame(b []byte) (seq uint64, first int, payload []byte, n int, ok bool) {
	hdr := frameHeader
	switch {
	case len(b) >= 4 && string(b[:4]) == frameMagic:
	case len(b) >= 4 && string(b[:4]) == frameMagicV1:
		hdr = frameHeaderV1
	default:
		return 0, 0, nil, 0, false
	}
	if len(b) < hdr {
		return 0, 0, nil, 0, false
	}
	plen := int(binary.LittleEndian.Uint32(b[4:8]))
	sum := binary.LittleEndian.Uint32(b[8:12])
	if plen > len(b)-hdr {
		return 0, 0, nil, 0, false
	}
	if crc32.Checksum(b[12:hdr+plen], crcTable) != sum {
		return 0, 0, nil, 0, false
	}
	if hdr == frameHeader {
		first = int(binary.LittleEndian.Uint32(b[20:24]))
	}
	return binary.LittleEndian.Uint64(b[12:20]), first, b[hdr : hdr+plen], hdr + plen, true
}

// putHeader fills the header of frame, whose payload follows it.
func putHeader(frame []byte, seq uint64, first int) {
	copy(frame, frameMagic)
	binary.LittleEndian.PutUint32(frame[4:], uint32(len(frame)-frameHeader))
	binary.LittleEndian.PutUint64(frame[12:], seq)
	binary.LittleEndian.PutUint32(frame[20:], uint32(first))
	binary.LittleEndian.PutUint32(frame[8:], crc32.Checksum(frame[12:], crcTable))
}

// reserve records on disk that the numbers up to next+seqReserve may be in
// use, so that a restart never reuses one. Called with mu held (or before
// the spool is shared).
func (s *Spool) reserve() error {
	s.ceiling = s.next + seqReserve
	if err := writeFileSync(filepath.Join(s.dir, "seq"), []byte(strconv.FormatUint(s.ceiling, 10)+"\n")); err != nil {
		return fmt.Errorf("cannot record the batch numbers: %w", err)
	}
	return nil
}

// writeFileSync replaces path with data durably (a temporary file, fsync,
// rename, fsync of the directory).
func writeFileSync(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (s *Spool) segPath(num uint64) string {
	return filepath.Join(s.dir, fmt.Sprintf("%016x.seg", num))
}

// ID returns the spool's id, which names its batches in a store's ledger.
func (s *Spool) ID() string { return s.id }

// Dir returns the spool's directory.
func (s *Spool) Dir() string { return s.dir }

// Size returns the bytes the spool's files hold now.
func (s *Spool) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size
}

// Rows returns how many rows wait in the spool to be written to the store.
func (s *Spool) Rows() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows
}

// nextID numbers a new batch.
func (s *Spool) nextID() (BatchID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= s.ceiling {
		if err := s.reserve(); err != nil {
			return BatchID{}, err
		}
	}
	s.next++
	return BatchID{Spool: s.id, Seq: s.next - 1}, nil
}

// empty reports whether no batch waits.
func (s *Spool) empty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending) == 0
}

// errSpoolEncode is the error of a batch the spool's encoder refuses (as
// encoding/json would): a row of it holds a value that is not JSON
// (arguments, a json.Number).
var errSpoolEncode = errors.New("cannot encode the batch")

// add appends a batch durably when fsync is set. The spool keeps a copy
// of recs (decoded, for the replay) while it holds few rows, so the caller
// may reuse recs' array once add returns: keeping the dispatcher's buffer
// (room for BatchSize rows, 754 KB at the default) held that much per
// spooled batch while the store was down, and made the dispatcher
// allocate and clear a new buffer per batch. The error wraps
// [ErrSpoolFull] when the batch does not fit.
func (s *Spool) add(id BatchID, recs []Record, fsync bool) error {
	frame, err := encodeFrame(nil, recs)
	if err != nil {
		return fmt.Errorf("audit: spool: %w: %w", errSpoolEncode, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("audit: spool: closed")
	}
	s.closeOpen() // its parts stay back to back
	seg, err := s.place(int64(len(frame)))
	if err != nil {
		return err
	}
	putHeader(frame, id.Seq, id.First)
	if err := s.writeFrame(seg, frame, fsync); err != nil {
		return err
	}
	e := &entry{seg: seg, off: seg.size, n: len(frame), seq: id.Seq, first: id.First, rows: len(recs)}
	if s.cached+len(recs) <= s.cacheMax {
		e.recs = slices.Clone(recs) // its own array, as long as the batch
		e.held = len(recs)
		s.cached += e.held
	}
	s.appended(seg, e, len(frame))
	s.wakeWriter()
	return nil
}

// addPart appends recs durably (fdatasync) as the next part of the open
// batch, or as the first part of a new one: [DurabilityDisk]'s group
// commit. The rows of many group commits then reach the store in one
// write of the whole batch, as they do with [DurabilityMemory], instead of
// one transaction per group commit (a handful of rows each at the
// demo's load, each one a transaction of the store's, which cost more
// than the fsync: see docs/serving.md). The batch is replayed once it is
// closed: when it holds maxRows rows, when the dispatcher closes it (every
// FlushInterval, and at Close), or when its segment is closed. A crash
// before the replay replays its parts, which are back to back in one
// segment, as one batch; the store's ledger ([OnceSink]) records the
// batch's rows as it does for any batch. The spool keeps a copy of recs,
// as add does.
func (s *Spool) addPart(recs []Record, maxRows int) error {
	// Encoded under mu: the dispatcher is the only caller, and the buffer
	// is reused.
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("audit: spool: closed")
	}
	frame, err := encodeFrame(s.buf[:0], recs)
	if err != nil {
		return fmt.Errorf("audit: spool: %w: %w", errSpoolEncode, err)
	}
	s.buf = frame[:0]
	fl := int64(len(frame))
	seg, err := s.place(fl) // a new segment closes the open batch
	if err != nil {
		return err
	}
	e := s.open
	if e != nil && (e.rows+len(recs) > maxRows || e.seg != seg || e.off+int64(e.n) != seg.size) {
		s.closeOpen()
		e = nil
	}
	seq, first := uint64(0), 0
	if e != nil {
		seq, first = e.seq, e.first+e.rows
	} else {
		if s.next >= s.ceiling {
			if err := s.reserve(); err != nil {
				return err
			}
		}
		seq = s.next
		s.next++
	}
	putHeader(frame, seq, first)
	if err := s.writeFrame(seg, frame, true); err != nil {
		return err
	}
	if e == nil {
		e = &entry{seg: seg, off: seg.size, seq: seq, rows: 0}
		// An array with room for the whole batch, counted whole against
		// cacheMax: the parts never regrow it, and it is reused once the
		// batch is in the store (growing one per batch by append was a
		// tenth of the demo's allocations with DurabilityDisk). Without
		// the room, the batch is read back from disk at its replay.
		if s.cached+maxRows <= s.cacheMax {
			if n := len(s.spare); n > 0 && cap(s.spare[n-1]) >= maxRows {
				e.recs, s.spare = s.spare[n-1], s.spare[:n-1]
			} else {
				e.recs = make([]Record, 0, maxRows)
			}
			e.held, e.reuse = cap(e.recs), true
			s.cached += e.held
		}
		s.appended(seg, e, 0)
		s.open = e
	}
	if e.recs != nil {
		e.recs = append(e.recs, recs...)
	}
	e.n += len(frame)
	e.rows += len(recs)
	seg.size += fl
	s.rows += len(recs)
	if e.rows >= maxRows {
		s.closeOpen()
	}
	return nil
}

// encodeFrame appends to buf a frame holding recs, its header left for
// putHeader.
func encodeFrame(buf []byte, recs []Record) ([]byte, error) {
	buf = append(buf, make([]byte, frameHeader)...)
	buf, err := appendRecords(buf, recs)
	if err != nil {
		return nil, fmt.Errorf("audit: spool: cannot encode the batch: %w", err)
	}
	return buf, nil
}

// place returns the segment a frame of fl bytes goes to (at its size),
// starting a new one when the frame does not fit in the one being
// written. Called with mu held. The error wraps [ErrSpoolFull] when the
// spool's files would outgrow MaxBytes.
func (s *Spool) place(fl int64) (*segment, error) {
	var seg *segment
	if n := len(s.segs); n > 0 && s.cur != nil {
		seg = s.segs[n-1]
	}
	newSeg := seg == nil || (seg.size > 0 && seg.size+fl > s.segBytes)
	// need is how much the files grow: a new segment's length (its
	// preallocation, or the frame) less the unused end the segment being
	// closed gives back, or what the frame adds beyond the segment's end.
	var need int64
	if newSeg {
		need = fl
		if s.prealloc {
			need = max(fl, s.segBytes)
		}
		if seg != nil {
			need -= seg.alloc - seg.size
		}
	} else {
		need = max(0, seg.size+fl-seg.alloc)
	}
	if s.size+need > s.maxBytes {
		return nil, fmt.Errorf("audit: spool %q: %w (%d of %d bytes used)", s.dir, ErrSpoolFull, s.size, s.maxBytes)
	}
	if newSeg {
		if err := s.rotate(); err != nil {
			return nil, err
		}
		seg = s.segs[len(s.segs)-1]
	}
	return seg, nil
}

// writeFrame writes frame at the end of seg's frames, durably when fsync
// is set; the caller then accounts for it. Called with mu held.
func (s *Spool) writeFrame(seg *segment, frame []byte, fsync bool) error {
	fl := int64(len(frame))
	if _, err := s.cur.WriteAt(frame, seg.size); err != nil {
		s.cut(seg) // undo a partial write; the segment grows from its frames' end from now on
		if errors.Is(err, syscall.ENOSPC) {
			return fmt.Errorf("audit: spool %q: %w: the disk is full", s.dir, ErrSpoolFull)
		}
		return fmt.Errorf("audit: spool %q: write: %w", s.dir, err)
	}
	if end := seg.size + fl; end > seg.alloc {
		s.size += end - seg.alloc
		seg.alloc = end
	}
	if fsync {
		// fdatasync: it covers the file's length when the frame
		// extended it, and waits for no journal when it did not.
		if err := datasync(s.cur); err != nil {
			return fmt.Errorf("audit: spool %q: fsync: %w", s.dir, err)
		}
	} else {
		s.dirty = true
	}
	return nil
}

// appended accounts for a new entry e in seg, whose frame of fl bytes was
// written. Called with mu held.
func (s *Spool) appended(seg *segment, e *entry, fl int) {
	seg.size += int64(fl)
	seg.pending++
	seg.minSeq = min(seg.minSeq, e.seq)
	s.rows += e.rows
	s.pending = append(s.pending, e)
}

// wakeWriter tells the writer a batch is ready. Called with mu held.
func (s *Spool) wakeWriter() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// closeOpen closes the open batch, if any: it takes no more parts, and
// the writer may replay it. Called with mu held.
func (s *Spool) closeOpen() {
	if s.open != nil {
		s.open = nil
		s.wakeWriter()
	}
}

// closeBatch closes the open batch (see addPart).
func (s *Spool) closeBatch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeOpen()
}

// rotate closes the segment being written and starts a new one, filled
// with zeros up front when prealloc is set.
func (s *Spool) rotate() error {
	if s.cur != nil {
		if err := s.closeCur(); err != nil {
			return err
		}
	}
	num := uint64(0)
	if n := len(s.segs); n > 0 {
		num = s.segs[n-1].num + 1
	}
	path := s.segPath(num)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("audit: spool %q: cannot start a segment: %w", s.dir, err)
	}
	seg := &segment{num: num, minSeq: ^uint64(0)}
	if s.prealloc {
		if err := preallocate(f, s.segBytes); err != nil {
			_ = f.Close()
			_ = os.Remove(path)
			if errors.Is(err, syscall.ENOSPC) {
				return fmt.Errorf("audit: spool %q: %w: the disk is full", s.dir, ErrSpoolFull)
			}
			return fmt.Errorf("audit: spool %q: cannot start a segment: %w", s.dir, err)
		}
		seg.alloc = s.segBytes
		s.size += seg.alloc
	}
	s.cur = f
	s.segs = append(s.segs, seg)
	return nil
}

// preallocate writes n zero bytes to the new, empty file f, and makes
// them and the file's name durable: the frames written into them later
// need only their data synced.
func preallocate(f *os.File, n int64) error {
	zeros := make([]byte, min(n, 1<<20))
	for off := int64(0); off < n; off += int64(len(zeros)) {
		if _, err := f.WriteAt(zeros[:min(int64(len(zeros)), n-off)], off); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(f.Name()))
}

// cut ends the file of seg, the segment being written, at its frames: it
// gives back the unused end, and the bytes of a write that failed half
// way. Called with mu held.
func (s *Spool) cut(seg *segment) {
	if s.cur == nil {
		return
	}
	if err := s.cur.Truncate(seg.size); err != nil {
		return // the zeros stay; the next open reads them as the end
	}
	s.size -= seg.alloc - seg.size
	seg.alloc = seg.size
}

// closeCur closes the segment being written: its unused end given back,
// its frames durable. The segment is deleted when all its batches are in
// the store. Called with mu held.
func (s *Spool) closeCur() error {
	s.closeOpen()
	s.cut(s.segs[len(s.segs)-1])
	err := s.cur.Sync()
	if cerr := s.cur.Close(); err == nil {
		err = cerr
	}
	s.cur = nil
	if err != nil {
		err = fmt.Errorf("audit: spool %q: fsync: %w", s.dir, err)
	}
	if derr := s.dropDoneTail(); err == nil {
		err = derr
	}
	return err
}

// dropDoneTail deletes the last segment when all its batches are in the
// store (ack keeps the one being written). Called with mu held, once the
// segment is closed.
func (s *Spool) dropDoneTail() error {
	n := len(s.segs)
	if n == 0 || s.segs[n-1].pending > 0 {
		return nil
	}
	seg := s.segs[n-1]
	s.segs = s.segs[:n-1]
	s.size -= seg.alloc
	if err := os.Remove(s.segPath(seg.num)); err != nil {
		return fmt.Errorf("audit: spool %q: %w", s.dir, err)
	}
	return nil
}

// seal stops appending to the segment being written: it is deleted as
// soon as all its batches are in the store (at once when they are), and
// the next batch starts a new one. The writer seals after a batch whose
// rows the store refused went to the fallback sink: the frame then leaves
// the disk with its segment, and a later crash does not replay it (a
// replay would send the refused rows to the fallback again).
func (s *Spool) seal() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil || s.closed {
		return nil
	}
	return s.closeCur()
}

// sync makes what was appended durable.
func (s *Spool) sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dirty || s.cur == nil {
		return nil
	}
	s.dirty = false
	return datasync(s.cur)
}

// peek returns the oldest batch and its rows, reading them from disk when
// they are not held in memory. ok is false when the spool is empty.
func (s *Spool) peek() (e *entry, recs []Record, ok bool, err error) {
	s.mu.Lock()
	if len(s.pending) == 0 {
		s.mu.Unlock()
		return nil, nil, false, nil
	}
	e = s.pending[0]
	if e == s.open {
		s.mu.Unlock()
		return nil, nil, false, nil // parts may still come
	}
	recs = e.recs
	s.mu.Unlock()
	if recs != nil {
		return e, recs, true, nil
	}
	recs, err = s.read(e)
	return e, recs, true, err
}

// prefetch decodes the batch after the oldest in the background, so that
// the replay reads the next batch while it writes this one.
func (s *Spool) prefetch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) < 2 || s.closed {
		return
	}
	e := s.pending[1]
	if e == s.open || e.recs != nil || e.loading || s.cached+e.rows > s.cacheMax {
		return
	}
	e.loading = true
	s.loaders.Add(1)
	go func() {
		defer s.loaders.Done()
		recs, err := s.read(e)
		s.mu.Lock()
		defer s.mu.Unlock()
		e.loading = false
		if err == nil && e.seg.pending > 0 && e.recs == nil && slices.Contains(s.pending, e) {
			e.recs = recs
			e.held = e.rows
			s.cached += e.held
		}
	}()
}

// countRows counts the elements of a JSON array of objects, as
// json.Marshal writes a batch, without decoding it: on open, the spool
// counts the rows of every batch, and decoding them all (as json.Unmarshal
// into []json.RawMessage did) took a fifth of the CPU of a drain after a
// restart. The frame's checksum has vouched for the bytes; ok is false when
// the payload is not an array of objects (the batch is then treated as
// damaged).
func countRows(p []byte) (n int, ok bool) {
	if len(p) < 2 || p[0] != '[' || p[len(p)-1] != ']' {
		return 0, false
	}
	depth, inString := 0, false
	for i := 1; i < len(p)-1; i++ {
		c := p[i]
		switch {
		case inString:
			switch c {
			case '\\':
				i++ // the escaped character
			case '"':
				inString = false
			}
		case depth == 0: // between the rows: only objects and commas
			switch c {
			case '{':
				n++
				depth++
			case ',':
			default:
				return 0, false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth--; depth < 0 {
				return 0, false
			}
		}
	}
	return n, depth == 0 && !inString
}

// read decodes a batch from its segment file.
func (s *Spool) read(e *entry) (recs []Record, err error) {
	f, err := os.Open(s.segPath(e.seg.num))
	if err != nil {
		return nil, fmt.Errorf("audit: spool %q: %w", s.dir, err)
	}
	defer f.Close()
	buf := make([]byte, e.n)
	if _, err := f.ReadAt(buf, e.off); err != nil {
		return nil, fmt.Errorf("audit: spool %q: read: %w", s.dir, err)
	}
	recs = make([]Record, 0, e.rows) // no regrowing while it decodes
	for off := 0; off < len(buf); {
		_, _, payload, n, good := parseFrame(buf[off:])
		if !good {
			return nil, fmt.Errorf("audit: spool %q: the batch at %s:%d is damaged", s.dir, s.segPath(e.seg.num), e.off+int64(off))
		}
		off += n
		// Numbers in the maps (ClientMeta, Detail) decode as json.Number,
		// as they were written: a float64 would round an id above 2^53,
		// and a number outside float64's range (1e999999, which a row may
		// carry and the store refuses) would fail the whole batch here,
		// where nothing can split it, instead of one row at the store.
		var part []Record
		dec := json.NewDecoder(bytes.NewReader(payload))
		dec.UseNumber()
		if err := dec.Decode(&part); err != nil {
			return nil, fmt.Errorf("audit: spool %q: decode: %w", s.dir, err)
		}
		recs = append(recs, part...)
	}
	return recs, nil
}

// ack removes the oldest batch (e, from peek): it is in the store. A
// segment whose batches are all acknowledged is deleted.
func (s *Spool) ack(e *entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 || s.pending[0] != e {
		return nil
	}
	s.pending[0] = nil
	s.pending = s.pending[1:]
	s.rows -= e.rows
	if e.recs != nil {
		s.cached -= e.held
		if e.reuse && len(s.spare) < 2 {
			clear(e.recs) // drop references to the rows' strings and maps
			s.spare = append(s.spare, e.recs[:0])
		}
		e.recs, e.held = nil, 0
	}
	seg := e.seg
	seg.pending--
	if seg.pending > 0 {
		return nil
	}
	i := slices.Index(s.segs, seg)
	if i < 0 {
		return nil
	}
	if i == len(s.segs)-1 && s.cur != nil {
		// The segment being written is kept, and the next batches are
		// appended to it: rotate deletes it once it is full, and Close
		// when it is done. With DurabilityDisk every batch is spooled and
		// acknowledged at once, and deleting the file and creating another
		// per batch made every fsync commit a file's creation and deletion
		// (a truncation costs the same). Its frames stay on disk until
		// then: after a crash they are replayed again, and an [OnceSink]
		// skips them (lowWater keeps their ids in its ledger).
		return nil
	}
	s.segs = slices.Delete(s.segs, i, i+1)
	s.size -= seg.alloc
	if err := os.Remove(s.segPath(seg.num)); err != nil {
		return fmt.Errorf("audit: spool %q: %w", s.dir, err)
	}
	return nil
}

// lowWater returns the lowest batch number that may still be replayed:
// the ledger may forget every number below it.
func (s *Spool) lowWater() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	low := s.next
	for _, seg := range s.segs {
		low = min(low, seg.minSeq)
	}
	return low
}

// Close makes what was appended durable and releases the directory. The
// [Async] that owns the spool closes it.
func (s *Spool) Close() error {
	s.loaders.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var err error
	if s.cur != nil {
		err = s.closeCur()
	}
	if cerr := s.lock.Close(); err == nil {
		err = cerr
	}
	return err
}
