package tmpdeps
import (
 _ "github.com/modelcontextprotocol/go-sdk/mcp"
 _ "github.com/fsnotify/fsnotify"
 _ "github.com/prometheus/client_golang/prometheus"
 _ "github.com/prometheus/common/expfmt"
 _ "github.com/lmittmann/tint"
 _ "github.com/tailscale/hujson"
 _ "golang.org/x/sync/errgroup"
 _ "golang.org/x/sync/singleflight"
 _ "golang.org/x/term"
 _ "github.com/BurntSushi/toml"
)
