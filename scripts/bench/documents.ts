/** The GraphQL documents `npm run bench` sends, shared by the load side and the gateway process. */
export { HOME_SCREEN } from '../../src/graphql/home-screen.js';
export { ME_QUERY } from './peers/common.js';

export const BILL_PAGE = `query BillPage { me { billRecords(first: 20) { totalCount nodes {
  id reference amount fee type status billerName customer createdAt } } } }`;
