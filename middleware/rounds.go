package middleware

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// The notes [Rounds] puts on every result it passes, for the audit row.
const (
	// NoteRound is the round of a multi-round-trip call, "1" for the first.
	NoteRound = "round"
	// NoteRoundOf is the CallID of the call's first round, on every later
	// round: the rows of one logical call are joined by it (the first
	// round's row is the one whose call id it is).
	NoteRoundOf = "round_of"
)

// RoundsConfig configures [Rounds].
type RoundsConfig struct {
	// Key seals the request state: with a key, the state the client gets
	// is encrypted and authenticated (AES-GCM, so 16, 24 or 32 bytes: a
	// key of another length panics at construction), bound to the tool and
	// to the caller's subject, and a state that does not open with it
	// (tampered with, made up, another tool's or another caller's, or
	// older than MaxAge) is refused as invalid arguments before the
	// handler runs. Without a key the state is only wrapped, in the clear:
	// the rounds are joined, but the client can change what the handler
	// gets back, which the spec allows only when the state decides
	// nothing the caller may not. Keep the key as you keep any server
	// secret; every replica that may get a later round needs the same.
	Key []byte
	// MaxAge, with a Key, bounds how long after its round a sealed state
	// is accepted; zero accepts any age.
	MaxAge time.Duration
}

// errInvalidState is what the client is told of a request state Rounds
// refuses.
var errInvalidState = errs.InvalidArguments("the request state is not valid: call the tool again without it")

// Rounds ties the rounds of a multi-round-trip call (an input-required
// result, [toolctx.InputRequired], and the client's calls that answer it)
// into one logical call. The state of an input-required result that
// passes through it is wrapped with the CallID of the call's first round
// and the round's number, and sealed with [RoundsConfig.Key] when there is
// one; on the next round it is opened again, and the next handler gets a
// copy of the Request whose RequestState is the handler's own state and
// whose Round and RoundOf say which round of which call this is. Every
// result gets the notes [NoteRound] and, after the first round,
// [NoteRoundOf], so the audit row of each round says so: rows of one call
// are joined by the first round's call id.
//
// Each round is a call of its own to every interceptor inside: a Timeout
// bounds each round, not the time the client took between two (a user
// deciding), and each round has its row.
//
// A state Rounds did not make is passed on unchanged without a key (a
// state from before Rounds was added), and refused with one. A refused
// state is the public invalid-arguments failure "the request state is not
// valid", scrubbed so that the audit row names why (a failed seal, an
// expired state, ...); the handler does not run.
//
// Place it inside the audit interceptor (so that a refused state has its
// row) and outside Diagnostics and Timeout (so that they see the round).
// Where an SDK's legacy bridge runs inside the adapter (go-sdk, for
// clients older than protocol 2026-07-28) the rounds happen within one
// call and never pass through Rounds.
func Rounds(cfg RoundsConfig) toolctx.Middleware { return roundsWithClock(cfg, time.Now) }

// roundsWithClock is Rounds reading the given clock (tests age a state).
func roundsWithClock(cfg RoundsConfig, now func() time.Time) toolctx.Middleware {
	r := &rounds{maxAge: cfg.MaxAge, now: now}
	if cfg.Key != nil {
		block, err := aes.NewCipher(cfg.Key)
		if err != nil {
			panic(fmt.Sprintf("middleware.Rounds: the key must be 16, 24 or 32 bytes, got %d", len(cfg.Key)))
		}
		if r.aead, err = cipher.NewGCM(block); err != nil {
			panic("middleware.Rounds: " + err.Error())
		}
	}
	if cfg.MaxAge < 0 {
		panic(fmt.Sprintf("middleware.Rounds: MaxAge must not be negative, got %s", cfg.MaxAge))
	}
	return r.middleware
}

type rounds struct {
	aead   cipher.AEAD // nil: wrap in the clear
	maxAge time.Duration
	now    func() time.Time
}

// roundState is what Rounds wraps a handler's state in.
type roundState struct {
	// First is the CallID of the call's first round.
	First string `json:"f"`
	// Round is the number of the round that made the state.
	Round int `json:"n"`
	// At is when, in Unix seconds (sealed states only).
	At int64 `json:"t,omitempty"`
	// State is the handler's own.
	State string `json:"s"`
}

// statePrefix marks a state Rounds made: "tm1." and the clear JSON in
// base64url, or "tm1s." and the sealed one.
const (
	clearPrefix  = "tm1."
	sealedPrefix = "tm1s."
)

// errForeignState is the cause of a state Rounds did not make.
var errForeignState = errors.New("middleware.Rounds: the request state was not made by Rounds")

func (r *rounds) middleware(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		if req.RequestState == "" {
			// A first round, or no multi-round-trip call at all: the
			// request goes on as it is, and only an input-required
			// answer is wrapped and noted.
			res := next.CallTool(ctx, req)
			if !res.NeedsInput() {
				return res
			}
			return r.wrapResult(req, res, req.CallID, 1).WithNote(NoteRound, "1")
		}
		st, err := r.open(req)
		switch {
		case errors.Is(err, errForeignState) && r.aead == nil:
			// A state from before Rounds: passed on as it came.
			return next.CallTool(ctx, req).WithNote(NoteRound, "?")
		case err != nil:
			return toolctx.ScrubbedResult(errInvalidState.Public(), err).WithNote(NoteRound, "?")
		}
		in := *req
		in.Round, in.RoundOf, in.RequestState = st.Round+1, st.First, st.State
		res := next.CallTool(ctx, &in)
		if res.NeedsInput() {
			res = r.wrapResult(req, res, st.First, in.Round)
		}
		return res.WithNote(NoteRound, strconv.Itoa(in.Round)).WithNote(NoteRoundOf, st.First)
	})
}

// wrapResult returns a copy of the input-required res whose state is
// wrapped (sealed with a key) for the client.
func (r *rounds) wrapResult(req *toolctx.Request, res *toolctx.CallResult, first string, round int) *toolctx.CallResult {
	ir := *res.InputRequired
	ir.State = r.wrap(req, roundState{First: first, Round: round, State: ir.State})
	out := *res
	out.InputRequired = &ir
	return &out
}

// aad binds a sealed state to the tool and the caller: a state opens only
// for the call it was made for.
func aad(req *toolctx.Request) []byte {
	subject := ""
	if req.Identity != nil {
		subject = req.Identity.Subject
	}
	return []byte("toolmw/rounds/v1\x00" + req.Tool + "\x00" + subject)
}

// wrap returns the state the client gets.
func (r *rounds) wrap(req *toolctx.Request, st roundState) string {
	if r.aead != nil {
		st.At = r.now().Unix()
	}
	payload, err := json.Marshal(st)
	if err != nil {
		// A struct of strings and ints always encodes.
		panic("middleware.Rounds: " + err.Error())
	}
	if r.aead == nil {
		return clearPrefix + base64.RawURLEncoding.EncodeToString(payload)
	}
	nonce := make([]byte, r.aead.NonceSize(), r.aead.NonceSize()+len(payload)+r.aead.Overhead())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails on supported platforms.
	return sealedPrefix + base64.RawURLEncoding.EncodeToString(r.aead.Seal(nonce, nonce, payload, aad(req)))
}

// open returns the state the client sent back, or why it is refused.
func (r *rounds) open(req *toolctx.Request) (roundState, error) {
	var st roundState
	s := req.RequestState
	var payload []byte
	switch {
	case r.aead != nil && strings.HasPrefix(s, sealedPrefix):
		b, err := base64.RawURLEncoding.DecodeString(s[len(sealedPrefix):])
		if err != nil {
			return st, fmt.Errorf("middleware.Rounds: the sealed request state is not base64url: %w", err)
		}
		n := r.aead.NonceSize()
		if len(b) < n+r.aead.Overhead() {
			return st, errors.New("middleware.Rounds: the sealed request state is too short")
		}
		if payload, err = r.aead.Open(nil, b[:n], b[n:], aad(req)); err != nil {
			return st, errors.New("middleware.Rounds: the request state does not open with the server's key for this tool and caller (tampered with, or made for another)")
		}
	case r.aead == nil && strings.HasPrefix(s, clearPrefix):
		b, err := base64.RawURLEncoding.DecodeString(s[len(clearPrefix):])
		if err != nil {
			return st, fmt.Errorf("middleware.Rounds: the request state is not base64url: %w", err)
		}
		payload = b
	case r.aead != nil && strings.HasPrefix(s, clearPrefix):
		return st, errors.New("middleware.Rounds: the request state is not sealed, and a key is set")
	default:
		return st, errForeignState
	}
	if err := json.Unmarshal(payload, &st); err != nil || st.Round < 1 || st.First == "" {
		return st, fmt.Errorf("middleware.Rounds: the request state's contents are not Rounds' (%d bytes)", len(payload))
	}
	if r.aead != nil && r.maxAge > 0 {
		if age := r.now().Sub(time.Unix(st.At, 0)); age > r.maxAge {
			return st, fmt.Errorf("middleware.Rounds: the request state is %s old, over MaxAge %s", age.Truncate(time.Second), r.maxAge)
		}
	}
	return st, nil
}
