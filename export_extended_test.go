package purramcp

import "purra.dev/purramcp/internal/profile"

// NewExtendedContract is NewContract with the profile widened as
// SchemaPolicy.ExtendedKeywords widens it, for the differential tests.
func NewExtendedContract(opts ContractOptions) (*Contract, error) {
	c, err := newContract(opts, profile.Options{ExtendedKeywords: true})
	if err != nil {
		return nil, err.ContractError
	}
	return c, nil
}
