package toolctx

// Content is one item of a tool result's unstructured content: [*Text],
// [*Image], [*Audio], [*ResourceLink] or [*EmbeddedResource]. The set is
// closed; adapters map each kind to and from their SDK losslessly.
type Content interface {
	content()
}

// Role is the audience of a piece of content: "user" or "assistant".
type Role string

// Annotations tell the client how to use a piece of content.
type Annotations struct {
	Audience []Role
	// Priority is from 0 (optional) to 1 (required); nil when unset.
	Priority *float64
	// LastModified is an ISO 8601 timestamp, or "".
	LastModified string
}

// Icon is an icon for a resource link.
type Icon struct {
	Src      string
	MIMEType string
	Sizes    []string
	Theme    string
}

// Text is text content.
type Text struct {
	Text        string
	Annotations *Annotations
	Meta        map[string]any
}

// Image is image content; Data holds the raw bytes (not base64).
type Image struct {
	Data        []byte
	MIMEType    string
	Annotations *Annotations
	Meta        map[string]any
}

// Audio is audio content; Data holds the raw bytes (not base64).
type Audio struct {
	Data        []byte
	MIMEType    string
	Annotations *Annotations
	Meta        map[string]any
}

// ResourceLink points to a resource the client may read.
type ResourceLink struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
	Size        *int64
	Icons       []Icon
	Annotations *Annotations
	Meta        map[string]any
}

// EmbeddedResource carries a resource's contents inline.
type EmbeddedResource struct {
	Resource    ResourceContents
	Annotations *Annotations
	Meta        map[string]any
}

// ResourceContents is the contents of a resource: Text or Blob.
type ResourceContents struct {
	URI      string
	MIMEType string
	Text     string
	Blob     []byte
	Meta     map[string]any
}

func (*Text) content()             {}
func (*Image) content()            {}
func (*Audio) content()            {}
func (*ResourceLink) content()     {}
func (*EmbeddedResource) content() {}
