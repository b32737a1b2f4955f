// Package outside holds toolmw's checks from outside: each built feature
// attacked through a real SDK server and client, on several transports,
// with shapes the feature's own tests do not use. It has no code of its
// own; its tests are the point.
package outside
