package main

import (
	"fmt"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// expectError checks that err is a gRPC status with code and, unless reason is empty, a
// google.rpc.ErrorInfo detail (read with status.Details()) in domain "solgate" with that reason.
// It returns the ErrorInfo so callers can look at its metadata.
func expectError(err error, code codes.Code, reason string) (*errdetails.ErrorInfo, error) {
	if err == nil {
		return nil, fmt.Errorf("call succeeded, want %s", code)
	}
	st, ok := status.FromError(err)
	if !ok {
		return nil, fmt.Errorf("not a gRPC status: %v", err)
	}
	if st.Code() != code {
		return nil, fmt.Errorf("code %s (%q), want %s", st.Code(), st.Message(), code)
	}
	if reason == "" {
		return nil, nil
	}
	for _, d := range st.Details() {
		if e, isErr := d.(error); isErr {
			return nil, fmt.Errorf("undecodable detail: %v", e)
		}
		if info, isInfo := d.(*errdetails.ErrorInfo); isInfo {
			if info.GetReason() != reason || info.GetDomain() != "solgate" {
				return nil, fmt.Errorf("ErrorInfo %s/%s, want solgate/%s", info.GetDomain(), info.GetReason(), reason)
			}
			return info, nil
		}
	}
	return nil, fmt.Errorf("no google.rpc.ErrorInfo among %d details of %s %q", len(st.Details()), st.Code(), st.Message())
}

// expectUnimplemented is the check for an RPC whose service has not landed yet.
// TODO(interop): each caller goes once its service is in INTEROP_LANDED.
func expectUnimplemented(err error) error {
	_, err = expectError(err, codes.Unimplemented, "")
	return err
}

// recent checks that ts is a valid timestamp within the last hour (and not in the future).
func recent(name string, ts *timestamppb.Timestamp) error {
	if ts == nil {
		return fmt.Errorf("%s is absent", name)
	}
	if err := ts.CheckValid(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	t := ts.AsTime()
	if t.Before(time.Now().Add(-time.Hour)) || t.After(time.Now().Add(time.Minute)) {
		return fmt.Errorf("%s = %s, not recent", name, t.Format(time.RFC3339Nano))
	}
	return nil
}
