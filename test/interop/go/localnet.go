package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// localnet calls a JSON-RPC method of the embedded localnet itself (not through the gateway): its control methods
// (`localnet_setFaults`), and sending or looking up what the gateway must not be asked about.
func (c *clients) localnet(method string, params any, result any) error {
	if _, isList := params.([]any); !isList {
		params = []any{params}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return err
	}
	client := http.Client{Timeout: 30 * time.Second}
	res, err := client.Post(c.fx.localnetURL, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var answer struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&answer); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if answer.Error != nil {
		return fmt.Errorf("%s: %s", method, answer.Error.Message)
	}
	if result == nil {
		return nil
	}
	return json.Unmarshal(answer.Result, result)
}

// onChain says, for each signature, whether the localnet executed it (any commitment, history searched).
func (c *clients) onChain(signatures []string) ([]bool, error) {
	var statuses struct {
		Value []*struct{} `json:"value"`
	}
	if err := c.localnet("getSignatureStatuses", []any{signatures, map[string]any{"searchTransactionHistory": true}}, &statuses); err != nil {
		return nil, err
	}
	if len(statuses.Value) != len(signatures) {
		return nil, fmt.Errorf("%d statuses for %d signatures", len(statuses.Value), len(signatures))
	}
	found := make([]bool, len(signatures))
	for i, s := range statuses.Value {
		found[i] = s != nil
	}
	return found, nil
}
