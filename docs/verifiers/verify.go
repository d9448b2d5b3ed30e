// Verifies an amil direct callback (spec 5.3). Usage: go run verify.go <api-key> < callback-body
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"
)

// formEncode is WHATWG form style, as the service signs: space is "+", "*" kept, "~" is "%7E"
// (url.QueryEscape keeps "~" and encodes "*").
func formEncode(text string) string {
	var out strings.Builder
	for _, c := range []byte(text) {
		switch {
		case c == ' ':
			out.WriteByte('+')
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9',
			c == '*', c == '-', c == '.', c == '_':
			out.WriteByte(c)
		default:
			fmt.Fprintf(&out, "%%%02X", c)
		}
	}
	return out.String()
}

// VerifyCallback reports whether the callback's signature matches its other fields.
func VerifyCallback(body, apiKey string) bool {
	fields := map[string]string{}
	for _, pair := range strings.Split(body, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err1 := url.QueryUnescape(k)
		value, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return false
		}
		if _, seen := fields[key]; seen {
			return false // a repeated field
		}
		fields[key] = value
	}
	received, ok := fields["signature"]
	if !ok {
		return false
	}
	delete(fields, "signature")
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	// The callback's field names are ASCII, where byte order is JavaScript's UTF-16 order.
	sort.Strings(keys)
	pairs := make([]string, len(keys))
	for i, k := range keys {
		pairs[i] = formEncode(k) + "=" + formEncode(fields[k])
	}
	key, err := hex.DecodeString(strings.ReplaceAll(apiKey, "-", "")) // 16 raw bytes, never the ASCII text
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(strings.Join(pairs, "&")))
	expected := hex.EncodeToString(mac.Sum(nil))[:16]
	return hmac.Equal([]byte(expected), []byte(strings.ToLower(received)))
}

func main() {
	body, _ := io.ReadAll(os.Stdin)
	valid := VerifyCallback(string(body), os.Args[1])
	if valid {
		fmt.Println("valid")
		os.Exit(0)
	}
	fmt.Println("invalid")
	os.Exit(1)
}
