package otlplog_test

import (
	"compress/gzip"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logpb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is an OTLP/HTTP logs receiver, as a Collector's otlp receiver
// is: it decodes the protobuf export requests POSTed to /v1/logs and keeps
// their records. It listens on 127.0.0.1 only, and can go down (its port
// closed: connection refused) and come back up on the same port.
type receiver struct {
	t    *testing.T
	addr string

	mu       sync.Mutex
	srv      *http.Server
	done     chan struct{}
	records  []received
	requests int
	refused  int           // requests answered 413
	changed  chan struct{} // closed and replaced on every request

	// answer, when set, writes the response instead of a plain success.
	answer func(w http.ResponseWriter)
	// maxBody, when not zero, is the largest request body taken: a larger
	// one is answered 413, as a Collector's max_request_body_size does.
	maxBody int
}

// received is one decoded log record, with the resource and scope it came
// under.
type received struct {
	rec      *logpb.LogRecord
	resource map[string]any
	scope    string
	gzip     bool
	path     string
	header   http.Header
}

// newReceiver reserves a port on 127.0.0.1 and starts down.
func newReceiver(t *testing.T) *receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{t: t, addr: ln.Addr().String(), changed: make(chan struct{})}
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.down)
	return r
}

func (r *receiver) url() string { return "http://" + r.addr }

// up listens on the receiver's port again (a port just closed may take a
// moment to be free: tried for at most 10 s).
func (r *receiver) up() {
	r.t.Helper()
	var ln net.Listener
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; {
		ln, err = net.Listen("tcp", r.addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatalf("receiver: cannot listen on %s again: %v", r.addr, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	r.mu.Lock()
	r.srv, r.done = srv, done
	r.mu.Unlock()
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
}

// down closes the port and every connection.
func (r *receiver) down() {
	r.mu.Lock()
	srv, done := r.srv, r.done
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
		<-done
	}
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a protobuf POST", http.StatusBadRequest)
		return
	}
	var body io.Reader = req.Body
	gz := req.Header.Get("Content-Encoding") == "gzip"
	if gz {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	tooLarge := r.maxBody > 0 && len(b) > r.maxBody
	if tooLarge {
		r.requests++
		r.refused++
	}
	r.mu.Unlock()
	if tooLarge {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	var msg collogpb.ExportLogsServiceRequest
	if err := proto.Unmarshal(b, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	answer := r.answer
	if answer == nil {
		for _, rl := range msg.ResourceLogs {
			res := attrs(rl.GetResource().GetAttributes())
			for _, sl := range rl.ScopeLogs {
				for _, lr := range sl.LogRecords {
					r.records = append(r.records, received{rec: lr, resource: res, scope: sl.GetScope().GetName(),
						gzip: gz, path: req.URL.Path, header: req.Header.Clone()})
				}
			}
		}
	}
	r.requests++
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	if answer != nil {
		answer(w)
		return
	}
	out, _ := proto.Marshal(&collogpb.ExportLogsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// got returns the records received so far.
func (r *receiver) got() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.records...)
}

// waitRecords waits until at least n records have arrived, at most 30 s.
func (r *receiver) waitRecords(n int) []received {
	r.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		got, changed := len(r.records), r.changed
		r.mu.Unlock()
		if got >= n {
			return r.got()
		}
		select {
		case <-changed:
		case <-timeout:
			r.t.Fatalf("receiver: %d records after 30 s, want %d", got, n)
		}
	}
}

// attrs decodes OTLP attributes into Go values.
func attrs(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = anyValue(kv.Value)
	}
	return m
}

func anyValue(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_ArrayValue:
		out := make([]any, len(x.ArrayValue.Values))
		for i, e := range x.ArrayValue.Values {
			out[i] = anyValue(e)
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		return attrs(x.KvlistValue.Values)
	case *commonpb.AnyValue_BytesValue:
		return x.BytesValue
	}
	return nil
}

func hexID(b []byte) string { return hex.EncodeToString(b) }
