// Package pkg is the shared toolbox of the svc services. It holds no domain rules: see the
// sub-packages for configuration, HTTP, authentication, keys, storage, events and the test kit.
package pkg
