package conformance

import "google.golang.org/protobuf/types/known/emptypb"

// emptyMsg is the message of the VER-002 probe of a method no server has.
type emptyMsg = emptypb.Empty
