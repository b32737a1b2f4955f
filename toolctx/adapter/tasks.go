package adapter

import (
	"context"
	"sync"
)

// Tasks links the executions of tasks (io.modelcontextprotocol/tasks) to
// the ids the SDK gives them, for an SDK that starts a task's execution
// before it tells anyone the id (mcp-go does; see docs/adapters/mcpgo.md):
// [Tasks.Open] a link under a key the execution's request shares with what
// the SDK's hooks see, [Tasks.Close] it with the id once the SDK has
// answered with the task, and the execution's [Tasks.Begin] waits for it.
// An execution whose id is known runs detached from the request that made
// the task (which an SDK may cancel as soon as it has answered), and
// [Tasks.Cancel] ends it. The zero Tasks is ready; it is safe for
// concurrent use.
type Tasks[K comparable] struct {
	links   sync.Map // K -> *taskLink
	cancels sync.Map // task id -> context.CancelFunc of its execution
}

type taskLink struct {
	done chan struct{}
	id   string // set before done is closed
}

// Open opens the link of the task whose request shares key.
func (t *Tasks[K]) Open(key K) { t.links.Store(key, &taskLink{done: make(chan struct{})}) }

// Close sets the link's id ("": the SDK made no task) and lets the
// execution go on; a link without an id is removed here, for an execution
// that never starts.
func (t *Tasks[K]) Close(key K, id string) {
	v, ok := t.links.Load(key)
	if !ok {
		return
	}
	link := v.(*taskLink)
	link.id = id
	close(link.done)
	if id == "" {
		t.links.Delete(key)
	}
}

// Cancel cancels the execution of the task id, if it runs.
func (t *Tasks[K]) Cancel(id string) {
	if cancel, ok := t.cancels.Load(id); ok {
		cancel.(context.CancelFunc)()
	}
}

// Begin returns the context the execution of the task whose request shares
// key runs in, detached from ctx's cancellation and ended by Cancel, and the
// task's id; or ctx and "" when no link was opened for key (or ctx ends
// before the link closes). Call end when the execution ends.
func (t *Tasks[K]) Begin(ctx context.Context, key K) (_ context.Context, id string, end func()) {
	if id = t.wait(ctx, key); id == "" {
		return ctx, "", func() {}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t.cancels.Store(id, cancel)
	return ctx, id, func() {
		t.cancels.Delete(id)
		cancel()
	}
}

func (t *Tasks[K]) wait(ctx context.Context, key K) string {
	var zero K
	if key == zero {
		return ""
	}
	v, ok := t.links.Load(key)
	if !ok {
		return ""
	}
	link := v.(*taskLink)
	select {
	case <-link.done:
		t.links.Delete(key)
		return link.id
	case <-ctx.Done():
		// Both may be ready: an SDK may cancel ctx just after it closed the link.
		t.links.Delete(key)
		select {
		case <-link.done:
			return link.id
		default:
			return ""
		}
	}
}
