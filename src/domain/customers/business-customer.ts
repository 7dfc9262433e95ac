/**
 * A customer of one of a user's businesses as the customers domain gives it, whoever keeps it: a
 * stored row of this gateway is one, and so is a customer read from an upstream REST v1
 * deployment (facade mode).
 */
export interface BusinessCustomer {
  id: string;
  businessId: string;
  name: string;
  phone: string | null;
  email: string | null;
  externalRef: string | null;
  status: 'active' | 'disabled';
  createdAt: Date;
  updatedAt: Date;
}
