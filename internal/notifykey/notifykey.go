package notifykey

// Key is the key.
type Key struct{}
