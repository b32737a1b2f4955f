package mcpsdk

// WithoutSchemaCache turns off the adapter's cache of compiled input
// schemas, for tests and benchmarks that compare with it.
func WithoutSchemaCache() Option { return func(c *config) { c.noSchemaCache = true } }
