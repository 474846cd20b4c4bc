import { exportRoute } from './exportOrders.ts';

export const portalExportPayments = exportRoute('payments');
