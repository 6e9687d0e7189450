//! A kitchen printer on 127.0.0.1 as the server sees one: it takes ESC/POS
//! bytes on TCP and answers the status request after them; what it
//! received is read back with the server's own decoder. It can hang up or
//! keep silent instead of answering, as a printer that lost power or
//! jammed would.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ordergate_server::printing::escpos::{self, Printout, STATUS_ONLINE, STATUS_REQUEST};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Behaviour {
    /// Prints and answers the status request.
    Answers = 0,
    /// Prints what it got, then drops the connection without answering.
    HangsUp = 1,
}

pub struct FakePrinter {
    pub address: SocketAddr,
    received: Arc<Mutex<Vec<u8>>>,
    behaviour: Arc<AtomicU8>,
    task: JoinHandle<()>,
}

impl FakePrinter {
    pub async fn start() -> FakePrinter {
        Self::start_at(SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    pub async fn start_at(address: SocketAddr) -> FakePrinter {
        let listener = TcpListener::bind(address)
            .await
            .expect("the printer's port");
        let address = listener.local_addr().unwrap();
        let received: Arc<Mutex<Vec<u8>>> = Arc::default();
        let behaviour = Arc::new(AtomicU8::new(Behaviour::Answers as u8));
        let (sink, mode) = (Arc::clone(&received), Arc::clone(&behaviour));
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let (sink, mode) = (Arc::clone(&sink), Arc::clone(&mode));
                tokio::spawn(async move {
                    let mut bytes = Vec::new();
                    let mut buffer = [0u8; 4096];
                    loop {
                        match stream.read(&mut buffer).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => bytes.extend_from_slice(&buffer[..n]),
                        }
                        if bytes.ends_with(&STATUS_REQUEST) {
                            break;
                        }
                    }
                    sink.lock().unwrap().extend_from_slice(&bytes);
                    if mode.load(Ordering::SeqCst) == Behaviour::Answers as u8 {
                        let _ = stream.write_all(&[STATUS_ONLINE]).await;
                        let _ = stream.flush().await;
                    }
                });
            }
        });
        FakePrinter {
            address,
            received,
            behaviour,
            task,
        }
    }

    /// A port nothing listens on: a printer that is off.
    pub async fn unplugged_address() -> SocketAddr {
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .unwrap();
        listener.local_addr().unwrap()
    }

    pub fn behave(&self, behaviour: Behaviour) {
        self.behaviour.store(behaviour as u8, Ordering::SeqCst);
    }

    pub fn printout(&self) -> Printout {
        escpos::decode(&self.received.lock().unwrap())
    }

    /// The tickets once at least `count` have printed, within 30 s.
    pub async fn tickets(&self, count: usize) -> Vec<Vec<String>> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let printout = self.printout();
            if printout.tickets.len() >= count {
                return printout.tickets;
            }
            assert!(
                Instant::now() < deadline,
                "{count} tickets expected, printed: {:#?}",
                printout
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for FakePrinter {
    fn drop(&mut self) {
        self.task.abort();
    }
}
